// CoreDNS with the plugins of the Corefile kubeadm writes for a cluster (errors, health, ready,
// kubernetes, prometheus, forward, cache, loop, reload, loadbalance) and log; the rest of
// CoreDNS's plugin.cfg is left out. As github.com/coredns/coredns's coredns.go main: the server
// type's directive order comes from core/dnsserver (zdirectives.go), and each plugin registers
// itself when imported (as core/plugin/zplugin.go imports them all).
package main

import (
	_ "github.com/coredns/coredns/core/dnsserver"
	"github.com/coredns/coredns/coremain"
	_ "github.com/coredns/coredns/plugin/cache"
	_ "github.com/coredns/coredns/plugin/errors"
	_ "github.com/coredns/coredns/plugin/forward"
	_ "github.com/coredns/coredns/plugin/health"
	_ "github.com/coredns/coredns/plugin/kubernetes"
	_ "github.com/coredns/coredns/plugin/loadbalance"
	_ "github.com/coredns/coredns/plugin/log"
	_ "github.com/coredns/coredns/plugin/loop"
	_ "github.com/coredns/coredns/plugin/metrics"
	_ "github.com/coredns/coredns/plugin/ready"
	_ "github.com/coredns/coredns/plugin/reload"
)

func main() {
	coremain.Run()
}
