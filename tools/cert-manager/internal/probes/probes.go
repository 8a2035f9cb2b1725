// Package probes serves a process's metrics and health endpoints on loopback only.
package probes

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"sync/atomic"
	"time"
)

// Serve listens on address (empty: serve nothing; checked by CheckLoopback first) and
// runs the server newServer builds until ctx ends.
func Serve(ctx context.Context, name, address string, newServer func(net.Listener) *http.Server) error {
	if address == "" {
		return nil
	}
	ln, err := (&net.ListenConfig{}).Listen(ctx, "tcp", address)
	if err != nil {
		return fmt.Errorf("--%s-address %q: %w", name, address, err)
	}
	server := newServer(ln)
	go func() {
		if err := server.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			fmt.Printf("%s server on %s stopped: %v\n", name, address, err)
		}
	}()
	go func() {
		<-ctx.Done()
		shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = server.Shutdown(shutdown)
	}()
	return nil
}

// CheckLoopback refuses a --<name>-address flag (keyed by name; empty ones are off) that
// is not a loopback IP and port: these processes run on a shared machine and expose
// nothing beyond it.
func CheckLoopback(addresses map[string]string) error {
	for name, address := range addresses {
		if address == "" {
			continue
		}
		if err := checkLoopback(name, address); err != nil {
			return err
		}
	}
	return nil
}

func checkLoopback(name, address string) error {
	host, _, err := net.SplitHostPort(address)
	if err != nil {
		return fmt.Errorf("--%s-address %q is not host:port: %w", name, address, err)
	}
	if ip := net.ParseIP(host); ip == nil || !ip.IsLoopback() {
		return fmt.Errorf("--%s-address %q must be a loopback IP and port such as 127.0.0.1:9402, not host %q", name, address, host)
	}
	return nil
}

// HealthServer answers /healthz with 200 while the process runs, and /readyz with 200
// once ready is set (every control loop started after the informer caches synced), 503
// before.
func HealthServer(ready *atomic.Bool) *http.Server {
	mux := http.NewServeMux()
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) {
		_, _ = w.Write([]byte("ok"))
	})
	mux.HandleFunc("/readyz", func(w http.ResponseWriter, _ *http.Request) {
		if !ready.Load() {
			http.Error(w, "informer caches not synced yet", http.StatusServiceUnavailable)
			return
		}
		_, _ = w.Write([]byte("ok"))
	})
	return &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
}
