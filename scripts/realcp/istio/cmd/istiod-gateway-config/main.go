// Command istiod-gateway-config feeds rendered manifests to istiod's own config generation (the
// istio.io/istio module, not a model of it) and prints, as JSON, what one gateway proxy would
// receive from istiod: its listeners, route configurations and clusters.
//
//	istiod-gateway-config --manifests FILE --gateway-pod NAMESPACE/NAME [--mesh-config FILE]
//
// FILE is a YAML stream (or "-" for stdin). Its Istio objects (networking.istio.io,
// security.istio.io, ...) become istiod's config store; its Services, Pods, Namespaces and
// Endpoints become the fake Kubernetes cluster istiod watches; other kinds are listed as ignored.
// The gateway proxy is the Pod named by --gateway-pod: a router proxy with that Pod's labels,
// namespace and IP, as istio-agent would announce it.
//
// istiod's settings are read from the environment exactly as istiod reads them (for example
// PILOT_FILTER_GATEWAY_CLUSTER_CONFIG=true), since istio's pilot/pkg/features registers them with
// pkg/env at process start.
//
// The pattern follows istio's pilot/pkg/networking/core/gateway_simulation_test.go
// (runGatewayTest: NewFakeDiscoveryServer, SetupProxy with model.Router, then the generated
// Listeners, Routes and Clusters); pkg/test.Wrap stands in for the *testing.T it takes.
package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"

	cluster "github.com/envoyproxy/go-control-plane/envoy/config/cluster/v3"
	listener "github.com/envoyproxy/go-control-plane/envoy/config/listener/v3"
	route "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	kubeyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"

	meshconfig "istio.io/api/mesh/v1alpha1"
	"istio.io/istio/pilot/pkg/config/kube/crd"
	"istio.io/istio/pilot/pkg/features"
	"istio.io/istio/pilot/pkg/model"
	"istio.io/istio/pilot/test/xds"
	"istio.io/istio/pkg/config/mesh"
	"istio.io/istio/pkg/config/schema/collections"
	"istio.io/istio/pkg/config/schema/resource"
	"istio.io/istio/pkg/log"
	"istio.io/istio/pkg/test"
	"istio.io/istio/pkg/version"
)

// The Kubernetes kinds istiod's service registry reads from the cluster for a gateway's config.
var kubernetesKinds = map[string]bool{"Service": true, "Pod": true, "Namespace": true, "Endpoints": true, "EndpointSlice": true}

type objectRef struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Namespace  string `json:"namespace,omitempty"`
	Name       string `json:"name"`
}

type resourceOut struct {
	Name string `json:"name"`
	// SHA-256 of the resource's deterministic protobuf wire encoding: what the proxy is sent.
	WireSha256 string          `json:"wireSha256"`
	Resource   json.RawMessage `json:"resource"`
}

type output struct {
	// The istio.io/istio build (its pkg/version, set by recipe.sh): the commit generating this.
	Istio struct {
		Version     string `json:"version"`
		GitRevision string `json:"gitRevision"`
	} `json:"istio"`
	Proxy struct {
		ID        string            `json:"id"`
		Namespace string            `json:"namespace"`
		IP        string            `json:"ip"`
		Labels    map[string]string `json:"labels"`
	} `json:"proxy"`
	Settings struct {
		FilterGatewayClusterConfig bool `json:"PILOT_FILTER_GATEWAY_CLUSTER_CONFIG"`
	} `json:"settings"`
	IstioConfigs      []objectRef   `json:"istioConfigs"`
	KubernetesObjects []objectRef   `json:"kubernetesObjects"`
	Ignored           []objectRef   `json:"ignored"`
	Listeners         []resourceOut `json:"listeners"`
	Routes            []resourceOut `json:"routes"`
	Clusters          []resourceOut `json:"clusters"`
	// istiod's own log lines (warning and above) written while generating this config.
	IstiodLog []json.RawMessage `json:"istiodLog"`
}

func main() {
	manifests := flag.String("manifests", "", "YAML stream of the rendered objects, or - for stdin")
	gatewayPod := flag.String("gateway-pod", "", "NAMESPACE/NAME of the gateway Pod among the manifests")
	meshConfigFile := flag.String("mesh-config", "", "MeshConfig YAML (istiod's mesh config map); default: istio's defaults")
	flag.Parse()
	if err := run(*manifests, *gatewayPod, *meshConfigFile, os.Stdout); err != nil {
		fmt.Fprintf(os.Stderr, "istiod-gateway-config: %v\n", err)
		os.Exit(1)
	}
}

func readInput(path string) ([]byte, error) {
	if path == "-" {
		return io.ReadAll(os.Stdin)
	}
	return os.ReadFile(path)
}

type splitManifests struct {
	istio, kubernetes []string
	out               *output
	pods              map[string]*corev1.Pod
}

// split sorts each document into istiod's config store, the fake cluster, or the ignored list.
func split(stream []byte, out *output) (*splitManifests, error) {
	s := &splitManifests{out: out, pods: map[string]*corev1.Pod{}}
	decoder := kubeyaml.NewYAMLOrJSONDecoder(bytes.NewReader(stream), 1<<20)
	for {
		var raw map[string]any
		if err := decoder.Decode(&raw); err != nil {
			if errors.Is(err, io.EOF) {
				break
			}
			return nil, fmt.Errorf("reading manifests: %w", err)
		}
		if len(raw) == 0 {
			continue
		}
		doc, err := yaml.Marshal(raw)
		if err != nil {
			return nil, err
		}
		var head struct {
			APIVersion string `json:"apiVersion"`
			Kind       string `json:"kind"`
			Metadata   struct {
				Name      string `json:"name"`
				Namespace string `json:"namespace"`
			} `json:"metadata"`
		}
		if err := yaml.Unmarshal(doc, &head); err != nil {
			return nil, err
		}
		ref := objectRef{head.APIVersion, head.Kind, head.Metadata.Namespace, head.Metadata.Name}
		gv, err := schema.ParseGroupVersion(head.APIVersion)
		if err != nil {
			return nil, fmt.Errorf("%s %s: %w", head.Kind, head.Metadata.Name, err)
		}
		gvk := gv.WithKind(head.Kind)
		if _, istio := collections.PilotGatewayAPI().FindByGroupVersionAliasesKind(resource.FromKubernetesGVK(&gvk)); istio && gv.Group != "" {
			if ref.Namespace == "" {
				return nil, fmt.Errorf("%s %s has no namespace: istiod would place it in the namespace it was applied to; set it", ref.Kind, ref.Name)
			}
			// istiod's own parsing and validation, one object at a time, so that a refusal names
			// the object (the fake server would print the whole stream).
			if _, _, err := crd.ParseInputs(string(doc)); err != nil {
				return nil, fmt.Errorf("istiod refuses %s %s/%s: %w", ref.Kind, ref.Namespace, ref.Name, err)
			}
			s.istio = append(s.istio, string(doc))
			out.IstioConfigs = append(out.IstioConfigs, ref)
			continue
		}
		if gv.Group == "" && kubernetesKinds[head.Kind] {
			if ref.Namespace == "" && head.Kind != "Namespace" {
				return nil, fmt.Errorf("%s %s has no namespace; set it", ref.Kind, ref.Name)
			}
			s.kubernetes = append(s.kubernetes, string(doc))
			out.KubernetesObjects = append(out.KubernetesObjects, ref)
			if head.Kind == "Pod" {
				pod := &corev1.Pod{}
				if err := yaml.Unmarshal(doc, pod); err != nil {
					return nil, err
				}
				s.pods[pod.Namespace+"/"+pod.Name] = pod
			}
			continue
		}
		out.Ignored = append(out.Ignored, ref)
	}
	return s, nil
}

func marshalAll[T proto.Message](items []T, name func(T) string) ([]resourceOut, error) {
	res := make([]resourceOut, 0, len(items))
	for _, item := range items {
		js, err := protojson.MarshalOptions{UseProtoNames: true}.Marshal(item)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name(item), err)
		}
		// protojson's output has deliberately unstable spacing; compact it.
		var compact bytes.Buffer
		if err := json.Compact(&compact, js); err != nil {
			return nil, err
		}
		wire, err := proto.MarshalOptions{Deterministic: true}.Marshal(item)
		if err != nil {
			return nil, err
		}
		sum := sha256.Sum256(wire)
		res = append(res, resourceOut{Name: name(item), WireSha256: hex.EncodeToString(sum[:]), Resource: compact.Bytes()})
	}
	sort.SliceStable(res, func(i, j int) bool { return res[i].Name < res[j].Name })
	return res, nil
}

func run(manifestsPath, gatewayPod, meshConfigFile string, w io.Writer) error {
	if manifestsPath == "" || gatewayPod == "" {
		return errors.New("--manifests and --gateway-pod are required")
	}
	logFile, err := os.CreateTemp("", "istiod-log-*.json")
	if err != nil {
		return err
	}
	defer os.Remove(logFile.Name())
	logOptions := log.DefaultOptions()
	logOptions.OutputPaths = []string{logFile.Name()}
	logOptions.JSONEncoding = true
	logOptions.SetDefaultOutputLevel(log.DefaultScopeName, log.WarnLevel)
	for _, scope := range log.Scopes() {
		logOptions.SetDefaultOutputLevel(scope.Name(), log.WarnLevel)
	}
	if err := log.Configure(logOptions); err != nil {
		return err
	}

	out := &output{IstioConfigs: []objectRef{}, KubernetesObjects: []objectRef{}, Ignored: []objectRef{}, IstiodLog: []json.RawMessage{}}
	stream, err := readInput(manifestsPath)
	if err != nil {
		return err
	}
	inputs, err := split(stream, out)
	if err != nil {
		return err
	}
	pod := inputs.pods[gatewayPod]
	if pod == nil {
		return fmt.Errorf("no Pod %s among the manifests: the gateway proxy is that Pod", gatewayPod)
	}
	if pod.Status.Phase != corev1.PodRunning || pod.Status.PodIP == "" {
		return fmt.Errorf("Pod %s must be Running with a podIP: istiod finds the proxy's workload by it", gatewayPod)
	}

	var meshConfig *meshconfig.MeshConfig
	if meshConfigFile != "" {
		text, err := os.ReadFile(meshConfigFile)
		if err != nil {
			return err
		}
		if meshConfig, err = mesh.ApplyMeshConfigDefaults(string(text)); err != nil {
			return fmt.Errorf("mesh config: %w", err)
		}
	}

	failure := test.Wrap(func(t test.Failer) {
		server := xds.NewFakeDiscoveryServer(t, xds.FakeOptions{
			ConfigString:           strings.Join(inputs.istio, "\n---\n"),
			KubernetesObjectString: strings.Join(inputs.kubernetes, "\n---\n"),
			MeshConfig:             meshConfig,
		})
		proxy := server.SetupProxy(&model.Proxy{
			Type:            model.Router,
			ID:              pod.Name + "." + pod.Namespace,
			ConfigNamespace: pod.Namespace,
			IPAddresses:     []string{pod.Status.PodIP},
			Labels:          pod.Labels,
			Metadata: &model.NodeMetadata{
				Labels:    pod.Labels,
				Namespace: pod.Namespace,
				// The proxy version istiod tailors its output to: this module's own (VERSION file).
				IstioVersion: istioVersion,
			},
		})
		out.Proxy.ID, out.Proxy.Namespace, out.Proxy.IP, out.Proxy.Labels = proxy.ID, proxy.ConfigNamespace, pod.Status.PodIP, pod.Labels
		listeners := server.Listeners(proxy)
		routes := server.RoutesFromListeners(proxy, listeners)
		clusters := server.Clusters(proxy)
		var err error
		if out.Listeners, err = marshalAll(listeners, func(l *listenerT) string { return l.GetName() }); err != nil {
			t.Fatal(err)
		}
		if out.Routes, err = marshalAll(routes, func(r *routeT) string { return r.GetName() }); err != nil {
			t.Fatal(err)
		}
		if out.Clusters, err = marshalAll(clusters, func(c *clusterT) string { return c.GetName() }); err != nil {
			t.Fatal(err)
		}
	})
	_ = log.Sync()
	if failure != nil {
		return fmt.Errorf("istiod: %w", failure)
	}
	out.Settings.FilterGatewayClusterConfig = features.FilterGatewayClusterConfig
	out.Istio.Version, out.Istio.GitRevision = version.Info.Version, version.Info.GitRevision
	logText, err := os.ReadFile(logFile.Name())
	if err != nil {
		return err
	}
	for _, line := range bytes.Split(logText, []byte("\n")) {
		if len(bytes.TrimSpace(line)) > 0 && json.Valid(line) {
			out.IstiodLog = append(out.IstiodLog, json.RawMessage(line))
		}
	}
	encoder := json.NewEncoder(w)
	encoder.SetIndent("", " ")
	return encoder.Encode(out)
}

type (
	listenerT = listener.Listener
	routeT    = route.RouteConfiguration
	clusterT  = cluster.Cluster
)

// The Istio release this module's source is (its VERSION file says 1.31; the module is master
// after the 1.30 branch), as the proxy's IstioVersion metadata.
const istioVersion = "1.31.0"
