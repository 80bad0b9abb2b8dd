// Command taint-eviction-v1.27.7 runs Kubernetes v1.27.7's own NoExecute taint-eviction
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

	v1 "k8s.io/api/core/v1"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/klog/v2"
	"k8s.io/kubernetes/pkg/controller/nodelifecycle/scheduler"
	nodeutil "k8s.io/kubernetes/pkg/controller/util/node"
)

const release = "v1.27.7"

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
	// The index NodeLifecycleController of this release adds (AddPodNodeNameIndexer from 1.33).
	if err := podInformer.Informer().AddIndexers(cache.Indexers{"spec.nodeName": podNodeName}); err != nil {
		return err
	}
	podIndexer := podInformer.Informer().GetIndexer()
	podsOnNode := func(nodeName string) ([]*v1.Pod, error) {
		objs, err := podIndexer.ByIndex("spec.nodeName", nodeName)
		if err != nil {
			return nil, err
		}
		pods := make([]*v1.Pod, 0, len(objs))
		for _, obj := range objs {
			if pod, ok := obj.(*v1.Pod); ok {
				pods = append(pods, pod)
			}
		}
		return pods, nil
	}
	podLister := podInformer.Lister()
	nodeLister := nodeInformer.Lister()
	tm := scheduler.NewNoExecuteTaintManager(ctx, client, podLister, nodeLister, podsOnNode)
	// Fed as NodeLifecycleController feeds it.
	podInformer.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: func(obj interface{}) { tm.PodUpdated(nil, obj.(*v1.Pod)) },
		UpdateFunc: func(prev, obj interface{}) {
			tm.PodUpdated(prev.(*v1.Pod), obj.(*v1.Pod))
		},
		DeleteFunc: func(obj interface{}) {
			pod, isPod := obj.(*v1.Pod)
			if !isPod {
				deleted, ok := obj.(cache.DeletedFinalStateUnknown)
				if !ok {
					klog.Errorf("Received unexpected object: %v", obj)
					return
				}
				if pod, ok = deleted.Obj.(*v1.Pod); !ok {
					klog.Errorf("DeletedFinalStateUnknown contained non-Pod object: %v", deleted.Obj)
					return
				}
			}
			tm.PodUpdated(pod, nil)
		},
	})
	nodeInformer.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: nodeutil.CreateAddNodeHandler(func(node *v1.Node) error {
			tm.NodeUpdated(nil, node)
			return nil
		}),
		UpdateFunc: nodeutil.CreateUpdateNodeHandler(func(oldNode, newNode *v1.Node) error {
			tm.NodeUpdated(oldNode, newNode)
			return nil
		}),
		DeleteFunc: nodeutil.CreateDeleteNodeHandler(func(node *v1.Node) error {
			tm.NodeUpdated(node, nil)
			return nil
		}),
	})
	factory.Start(ctx.Done())
	if !cache.WaitForNamedCacheSync("taint", ctx.Done(), podInformer.Informer().HasSynced, nodeInformer.Informer().HasSynced) {
		return nil // only a stop signal ends the wait early
	}
	announceReady()
	tm.Run(ctx)
	klog.Infof("taint-eviction-%s: stopped", release)
	return nil
}

func podNodeName(obj interface{}) ([]string, error) {
	pod, ok := obj.(*v1.Pod)
	if !ok || pod.Spec.NodeName == "" {
		return []string{}, nil
	}
	return []string{pod.Spec.NodeName}, nil
}
