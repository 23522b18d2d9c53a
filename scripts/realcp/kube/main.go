package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"go.etcd.io/etcd/server/v3/etcdmain"
	"k8s.io/component-base/cli"
	"k8s.io/component-base/logs"
	kubectl "k8s.io/kubectl/pkg/cmd"
	kubectlutil "k8s.io/kubectl/pkg/cmd/util"
	apiserver "k8s.io/kubernetes/cmd/kube-apiserver/app"
	controllermanager "k8s.io/kubernetes/cmd/kube-controller-manager/app"
	proxy "k8s.io/kubernetes/cmd/kube-proxy/app"
	scheduler "k8s.io/kubernetes/cmd/kube-scheduler/app"
	kubelet "k8s.io/kubernetes/cmd/kubelet/app"

	// As k8s.io/kubernetes/cmd/kubectl/kubectl.go: the client auth plugins.
	_ "k8s.io/client-go/plugin/pkg/client/auth"
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
	case "kubectl":
		// As k8s.io/kubernetes/cmd/kubectl/kubectl.go's main (v1.37.2).
		os.Args = args
		logs.GlogSetter(kubectl.GetLogVerbosity(os.Args)) // nolint:errcheck
		if err := cli.RunNoErrOutput(kubectl.NewDefaultKubectlCommand()); err != nil {
			kubectlutil.CheckErr(err)
		}
		return
	}
	fmt.Fprintf(os.Stderr, "kube: unknown command %q\n", name)
	os.Exit(2)
}
