// Command taint-eviction-v1.34.5 runs Kubernetes v1.34.5's own NoExecute taint-eviction
// controller, wired as that release's kube-controller-manager wires it: a clientset with kcm's
// defaults (qps 20, burst 30, protobuf), shared informers for pods and nodes with the pod
// spec.nodeName index, upstream's event broadcaster. Generated from
// upstream/controller/main.go.tmpl by upstream/controller/gen.sh; do not edit.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"

	utilfeature "k8s.io/apiserver/pkg/util/feature"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/klog/v2"
	"k8s.io/kubernetes/pkg/controller"
	"k8s.io/kubernetes/pkg/controller/tainteviction"
)

const release = "v1.34.5"

// minResync is kube-controller-manager's --min-resync-period default; kcm draws each informer's
// resync period from [minResync, 2*minResync), far longer than any run here.
const minResync = 12 * time.Hour

func main() {
	klog.InitFlags(nil)
	kubeconfig := flag.String("kubeconfig", "", "kubeconfig of the API server (required)")
	qps := flag.Float64("kube-api-qps", 20, "client QPS, kube-controller-manager's default")
	burst := flag.Int("kube-api-burst", 30, "client burst, kube-controller-manager's default")
	contentType := flag.String("kube-api-content-type", "application/vnd.kubernetes.protobuf", "client content type, kube-controller-manager's default")
	gates := flag.String("feature-gates", "", "feature gates of Kubernetes "+release+", e.g. TaintTolerationComparisonOperators=true")
	flag.Parse()
	if *kubeconfig == "" || flag.NArg() > 0 {
		fmt.Fprintln(os.Stderr, "usage: taint-eviction-"+release+" --kubeconfig FILE [--kube-api-qps Q] [--kube-api-burst B] [--feature-gates G] [-v N]")
		os.Exit(2)
	}
	if *gates != "" {
		if err := utilfeature.DefaultMutableFeatureGate.Set(*gates); err != nil {
			fmt.Fprintf(os.Stderr, "taint-eviction-%s: --feature-gates: %v\n", release, err)
			os.Exit(2)
		}
	}
	config, err := clientcmd.BuildConfigFromFlags("", *kubeconfig)
	if err != nil {
		fmt.Fprintf(os.Stderr, "taint-eviction-%s: --kubeconfig %s: %v\n", release, *kubeconfig, err)
		os.Exit(2)
	}
	config.QPS = float32(*qps)
	config.Burst = *burst
	config.ContentType = *contentType

	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	if err := run(ctx, config); err != nil {
		klog.Errorf("taint-eviction-%s: %v", release, err)
		klog.Flush()
		os.Exit(1)
	}
	klog.Flush()
}

// announceReady prints "ready taint-eviction-vX.Y.Z" on stdout once the pod and node caches have
// synced: from then on the controller reacts to every change.
func announceReady() {
	klog.Infof("taint-eviction-%s: caches synced, running", release)
	fmt.Println("ready taint-eviction-" + release)
}

// newClient is kcm's ClientBuilder: one clientset, hence one token bucket, per name.
func newClient(config *rest.Config, name string) (kubernetes.Interface, error) {
	return kubernetes.NewForConfig(rest.AddUserAgent(rest.CopyConfig(config), name))
}

func run(ctx context.Context, config *rest.Config) error {
	informerClient, err := newClient(config, "shared-informers")
	if err != nil {
		return err
	}
	// The taint manager uses the node-controller identity in every release.
	client, err := newClient(config, "node-controller")
	if err != nil {
		return err
	}
	factory := informers.NewSharedInformerFactory(informerClient, minResync)
	podInformer := factory.Core().V1().Pods()
	nodeInformer := factory.Core().V1().Nodes()
	if err := controller.AddPodNodeNameIndexer(podInformer.Informer()); err != nil {
		return err
	}
	tec, err := tainteviction.New(ctx, client, podInformer, nodeInformer, "taint-eviction-controller")
	if err != nil {
		return err
	}
	factory.Start(ctx.Done())
	for _, synced := range factory.WaitForCacheSync(ctx.Done()) {
		if !synced { // only a stop signal ends the wait early
			return nil
		}
	}
	announceReady()
	tec.Run(ctx)
	klog.Infof("taint-eviction-%s: stopped", release)
	return nil
}
