// Command cert-manager-controller runs the real cert-manager control loops from the
// published root module github.com/cert-manager/cert-manager (the upstream binary module
// is not served by the Go module proxy). It wires only what HAPTIC's certificate
// bootstrap needs: Issuers and ClusterIssuers, the whole Certificate pipeline, and
// CertificateRequest signing for the selfSigned and CA issuer types, plus the approver
// that marks each CertificateRequest Approved (there is no policy engine).
//
// It runs outside a cluster against the kube-apiserver of --kubeconfig, without leader
// election, with its metrics and health endpoints on loopback addresses (or off).
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/signal"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	controllerpkg "github.com/cert-manager/cert-manager/pkg/controller"
	logf "github.com/cert-manager/cert-manager/pkg/logs"
	"k8s.io/klog/v2"

	// Each import registers its control loop with controllerpkg in init(); the names
	// below come from the same packages, so a renamed loop fails to compile.
	"github.com/cert-manager/cert-manager/pkg/controller/certificaterequests/approver"
	crca "github.com/cert-manager/cert-manager/pkg/controller/certificaterequests/ca"
	crselfsigned "github.com/cert-manager/cert-manager/pkg/controller/certificaterequests/selfsigned"
	"github.com/cert-manager/cert-manager/pkg/controller/certificates/issuing"
	"github.com/cert-manager/cert-manager/pkg/controller/certificates/keymanager"
	"github.com/cert-manager/cert-manager/pkg/controller/certificates/readiness"
	"github.com/cert-manager/cert-manager/pkg/controller/certificates/requestmanager"
	"github.com/cert-manager/cert-manager/pkg/controller/certificates/revisionmanager"
	"github.com/cert-manager/cert-manager/pkg/controller/certificates/trigger"
	"github.com/cert-manager/cert-manager/pkg/controller/clusterissuers"
	"github.com/cert-manager/cert-manager/pkg/controller/issuers"

	// The issuers controllers look issuer types up in a registry filled by init():
	// only selfSigned and CA are linked, so any other type is reported as unknown.
	_ "github.com/cert-manager/cert-manager/pkg/issuer/ca"
	_ "github.com/cert-manager/cert-manager/pkg/issuer/selfsigned"

	"haptic.local/tools/cert-manager/internal/buildinfo"
	"haptic.local/tools/cert-manager/internal/probes"
)

// controllers is the fixed set this binary runs, in no particular order.
var controllers = []string{
	issuers.ControllerName,
	clusterissuers.ControllerName,
	trigger.ControllerName,
	issuing.ControllerName,
	keymanager.ControllerName,
	requestmanager.ControllerName,
	readiness.ControllerName,
	revisionmanager.ControllerName,
	approver.ControllerName,
	crselfsigned.CRControllerName,
	crca.CRControllerName,
}

func main() {
	// a flag set of our own: imported packages may register global flags.
	flags := flag.NewFlagSet(os.Args[0], flag.ExitOnError)
	kubeconfig := flags.String("kubeconfig", "", "path to the kubeconfig of the target kube-apiserver (required)")
	namespace := flags.String("namespace", "cert-manager", "cluster resource namespace: where ClusterIssuers read their Secrets")
	metricsAddress := flags.String("metrics-address", "", "loopback host:port for Prometheus metrics; empty disables them")
	healthAddress := flags.String("health-address", "", "loopback host:port for /healthz and /readyz; empty disables them")
	workers := flags.Int("workers", 5, "worker goroutines per control loop")
	showVersion := flags.Bool("version", false, "print the cert-manager module version and exit")
	klog.InitFlags(flags)        // -v=N raises cert-manager's log verbosity
	_ = flags.Parse(os.Args[1:]) // ExitOnError: a bad flag exits with usage

	version := buildinfo.Apply()
	if *showVersion {
		fmt.Println(version)
		return
	}
	if *kubeconfig == "" {
		fail(errors.New("--kubeconfig is required: this controller runs outside the cluster"))
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, *kubeconfig, *namespace, *metricsAddress, *healthAddress, *workers); err != nil {
		fail(err)
	}
}

func run(ctx context.Context, kubeconfig, namespace, metricsAddress, healthAddress string, workers int) error {
	if err := probes.CheckLoopback(map[string]string{"metrics": metricsAddress, "health": healthAddress}); err != nil {
		return err
	}
	ctx = logf.NewContext(ctx, logf.Log, "cert-manager-controller")
	log := logf.FromContext(ctx)

	// The same values cert-manager's own configuration defaults to (its API QPS/burst,
	// the annotations copied from a Certificate to its CertificateRequests, and the
	// 1 h → 32 h back-off after a failed request), except the namespace, which is a flag.
	factory, err := controllerpkg.NewContextFactory(ctx, controllerpkg.ContextOptions{
		Kubeconfig:         kubeconfig,
		KubernetesAPIQPS:   20,
		KubernetesAPIBurst: 50,
		IssuerOptions:      controllerpkg.IssuerOptions{ClusterResourceNamespace: namespace},
		CertificateOptions: controllerpkg.CertificateOptions{
			CopiedAnnotationPrefixes:                 []string{"*", "-kubectl.kubernetes.io/", "-fluxcd.io/", "-argocd.argoproj.io/"},
			CertificateRequestMinimumBackoffDuration: time.Hour,
			CertificateRequestMaximumBackoffDuration: 32 * time.Hour,
		},
	})
	if err != nil {
		return err
	}

	// Constructing a loop registers the informers it needs with the shared factories,
	// so every loop is built before the factories start.
	loops := make(map[string]controllerpkg.Interface, len(controllers))
	for _, name := range controllers {
		construct, ok := controllerpkg.Known()[name]
		if !ok {
			return fmt.Errorf("control loop %q is not registered: its package import is missing from main.go", name)
		}
		loop, err := construct(factory)
		if err != nil {
			return fmt.Errorf("building control loop %q: %w", name, err)
		}
		loops[name] = loop
	}

	// Build returns a Context sharing the factory's informer factories and metrics.
	shared, err := factory.Build()
	if err != nil {
		return err
	}
	ready := &atomic.Bool{}
	if err := probes.Serve(ctx, "metrics", metricsAddress, func(ln net.Listener) *http.Server { return shared.Metrics.NewServer(ln) }); err != nil {
		return err
	}
	if err := probes.Serve(ctx, "health", healthAddress, func(net.Listener) *http.Server { return probes.HealthServer(ready) }); err != nil {
		return err
	}

	shared.KubeSharedInformerFactory.Start(ctx.Done())
	shared.SharedInformerFactory.Start(ctx.Done())
	shared.KubeSharedInformerFactory.WaitForCacheSync(ctx.Done())
	shared.SharedInformerFactory.WaitForCacheSync(ctx.Done())
	if ctx.Err() != nil {
		return nil
	}

	// Each loop waits for its own caches, then runs its workers until ctx ends; a loop
	// that fails stops all of them, so the process exits instead of running half-wired.
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	errs := make(chan error, len(loops))
	var wg sync.WaitGroup
	for name, loop := range loops {
		wg.Go(func() {
			log.Info("starting control loop", "controller", name)
			if err := loop.Run(workers, ctx); err != nil {
				errs <- fmt.Errorf("control loop %q: %w", name, err)
				cancel()
			}
		})
	}
	ready.Store(true)
	log.Info("cert-manager controller ready", "version", buildinfo.Version(), "controllers", controllers)
	wg.Wait()
	close(errs)
	return errors.Join(collect(errs)...)
}

func collect(errs <-chan error) []error {
	var all []error
	for err := range errs {
		all = append(all, err)
	}
	return all
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "cert-manager-controller:", err)
	os.Exit(1)
}
