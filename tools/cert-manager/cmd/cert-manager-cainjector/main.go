// Command cert-manager-cainjector runs cert-manager's real CA injector from the published
// root module github.com/cert-manager/cert-manager (the upstream binary module is not
// served by the Go module proxy). It copies the CA of a cert-manager Certificate's Secret
// into the caBundle of every webhook configuration, APIService and CRD annotated
// `cert-manager.io/inject-ca-from: <namespace>/<certificate>` (or inject-ca-from-secret).
//
// It runs outside a cluster against the kube-apiserver of --kubeconfig, without leader
// election, with its metrics and health endpoints on loopback addresses (or off).
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net/http"
	"os"
	"time"

	cmscheme "github.com/cert-manager/cert-manager/pkg/client/clientset/versioned/scheme"
	"github.com/cert-manager/cert-manager/pkg/controller/cainjector"
	"github.com/cert-manager/cert-manager/pkg/util"
	corev1 "k8s.io/api/core/v1"
	apiext "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	kscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/klog/v2"
	apireg "k8s.io/kube-aggregator/pkg/apis/apiregistration/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"haptic.local/tools/cert-manager/internal/buildinfo"
	"haptic.local/tools/cert-manager/internal/probes"
)

func main() {
	// controller-runtime registers its own --kubeconfig on the global flag set, so ours live in a set of their own.
	flags := flag.NewFlagSet(os.Args[0], flag.ExitOnError)
	kubeconfig := flags.String("kubeconfig", "", "path to the kubeconfig of the target kube-apiserver (required)")
	namespace := flags.String("namespace", "", "inject only from Certificates and Secrets in this namespace; empty means every namespace")
	metricsAddress := flags.String("metrics-address", "", "loopback host:port for Prometheus metrics; empty disables them")
	healthAddress := flags.String("health-address", "", "loopback host:port for /healthz and /readyz; empty disables them")
	crdWait := flags.Duration("crd-wait", 2*time.Minute, "how long to wait for the certificates.cert-manager.io CRD before giving up")
	showVersion := flags.Bool("version", false, "print the cert-manager module version and exit")
	klog.InitFlags(flags)        // -v=N raises the log verbosity
	_ = flags.Parse(os.Args[1:]) // ExitOnError: a bad flag exits with usage

	version := buildinfo.Apply()
	if *showVersion {
		fmt.Println(version)
		return
	}
	if *kubeconfig == "" {
		fail(errors.New("--kubeconfig is required: the injector runs outside the cluster"))
	}
	ctrl.SetLogger(klog.NewKlogr())
	if err := run(ctrl.SetupSignalHandler(), *kubeconfig, *namespace, *metricsAddress, *healthAddress, *crdWait); err != nil {
		fail(err)
	}
}

func run(ctx context.Context, kubeconfig, namespace, metricsAddress, healthAddress string, crdWait time.Duration) error {
	if err := probes.CheckLoopback(map[string]string{"metrics": metricsAddress, "health": healthAddress}); err != nil {
		return err
	}
	restConfig, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return fmt.Errorf("loading --kubeconfig %s: %w", kubeconfig, err)
	}
	restConfig = util.RestConfigWithUserAgent(restConfig, "cainjector")

	// The injector reads Certificates, webhook configurations, APIServices and CRDs.
	scheme := runtime.NewScheme()
	utilruntime.Must(kscheme.AddToScheme(scheme))
	utilruntime.Must(cmscheme.AddToScheme(scheme))
	utilruntime.Must(apiext.AddToScheme(scheme))
	utilruntime.Must(apireg.AddToScheme(scheme))

	var namespaces map[string]cache.Config
	if namespace != "" {
		namespaces = map[string]cache.Config{namespace: {}}
	}
	metrics := metricsserver.Options{BindAddress: "0"} // "0" turns the server off
	if metricsAddress != "" {
		metrics.BindAddress = metricsAddress
	}
	mgr, err := ctrl.NewManager(restConfig, ctrl.Options{
		Scheme: scheme,
		// Like upstream: Secrets are watched by metadata only and read directly when a
		// CA is injected, so no cache ever holds every Secret of the cluster.
		Cache:                  cache.Options{ReaderFailOnMissingInformer: true, DefaultNamespaces: namespaces},
		Client:                 client.Options{Cache: &client.CacheOptions{DisableFor: []client.Object{&corev1.Secret{}}}},
		LeaderElection:         false,
		Metrics:                metrics,
		HealthProbeBindAddress: healthAddress,
	})
	if err != nil {
		return fmt.Errorf("creating the controller manager: %w", err)
	}
	if healthAddress != "" {
		if err := mgr.AddHealthzCheck("ping", healthz.Ping); err != nil {
			return err
		}
		// Ready once the manager's informer caches have synced.
		if err := mgr.AddReadyzCheck("caches", func(req *http.Request) error {
			synced, cancel := context.WithTimeout(req.Context(), time.Second)
			defer cancel()
			if !mgr.GetCache().WaitForCacheSync(synced) {
				return errors.New("informer caches not synced")
			}
			return nil
		}); err != nil {
			return err
		}
	}

	// The Certificate data source watches Certificates: their CRD must exist first.
	if err := waitForCertificateCRD(ctx, mgr, crdWait); err != nil {
		return err
	}
	// Every injectable kind, from both Certificates (inject-ca-from) and Secrets
	// (inject-ca-from-secret), as upstream enables by default.
	err = cainjector.RegisterAllInjectors(ctx, mgr, cainjector.SetupOptions{
		Namespace:                    namespace,
		EnableCertificatesDataSource: true,
		EnabledReconcilersFor: map[string]bool{
			cainjector.MutatingWebhookConfigurationName:   true,
			cainjector.ValidatingWebhookConfigurationName: true,
			cainjector.APIServiceName:                     true,
			cainjector.CustomResourceDefinitionName:       true,
		},
	})
	if err != nil {
		return fmt.Errorf("registering the injectors: %w", err)
	}
	ctrl.Log.Info("cert-manager cainjector starting", "version", buildinfo.Version())
	return mgr.Start(ctx)
}

func waitForCertificateCRD(ctx context.Context, mgr ctrl.Manager, timeout time.Duration) error {
	direct, err := client.New(mgr.GetConfig(), client.Options{Scheme: mgr.GetScheme(), Mapper: mgr.GetRESTMapper()})
	if err != nil {
		return err
	}
	name := types.NamespacedName{Name: "certificates.cert-manager.io"}
	err = wait.PollUntilContextTimeout(ctx, time.Second, timeout, true, func(ctx context.Context) (bool, error) {
		err := direct.Get(ctx, name, &apiext.CustomResourceDefinition{})
		if apierrors.IsNotFound(err) {
			return false, nil
		}
		return err == nil, err
	})
	if err != nil {
		return fmt.Errorf("CRD %s not found within --crd-wait=%s (install cert-manager's CRDs first): %w", name.Name, timeout, err)
	}
	return nil
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "cert-manager-cainjector:", err)
	os.Exit(1)
}
