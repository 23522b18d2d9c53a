package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"go.etcd.io/etcd/server/v3/etcdmain"
	"k8s.io/component-base/cli"
	apiserver "k8s.io/kubernetes/cmd/kube-apiserver/app"
	controllermanager "k8s.io/kubernetes/cmd/kube-controller-manager/app"
	proxy "k8s.io/kubernetes/cmd/kube-proxy/app"
	scheduler "k8s.io/kubernetes/cmd/kube-scheduler/app"
	kubelet "k8s.io/kubernetes/cmd/kubelet/app"
)

func main() {
	name := filepath.Base(os.Args[0])
	args := os.Args
	if name == "kube" && len(os.Args) > 1 {
		name = os.Args[1]
		args = os.Args[1:]
	}
	switch name {
	case "etcd":
		etcdmain.Main(args)
		return
	case "kube-apiserver":
		os.Args = args
		os.Exit(cli.Run(apiserver.NewAPIServerCommand()))
	case "kube-controller-manager":
		os.Args = args
		os.Exit(cli.Run(controllermanager.NewControllerManagerCommand()))
	case "kube-scheduler":
		os.Args = args
		os.Exit(cli.Run(scheduler.NewSchedulerCommand()))
	case "kubelet":
		// As k8s.io/kubernetes/cmd/kubelet/kubelet.go's main.
		os.Args = args
		os.Exit(cli.Run(kubelet.NewKubeletCommand(context.Background())))
	case "kube-proxy":
		// As k8s.io/kubernetes/cmd/kube-proxy/proxy.go's main.
		os.Args = args
		os.Exit(cli.Run(proxy.NewProxyCommand()))
	}
	fmt.Fprintf(os.Stderr, "kube: unknown command %q\n", name)
	os.Exit(2)
}
