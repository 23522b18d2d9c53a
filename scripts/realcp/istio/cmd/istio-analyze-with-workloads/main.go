// Command istio-analyze-with-workloads runs every analyzer of `istioctl analyze` on YAML files,
// including the Kubernetes objects a cluster would hold (Pods, Services, Namespaces, Deployments).
//
//	istio-analyze-with-workloads FILE...
//
// `istioctl analyze --use-kube=false` reads only the Istio objects of its files and skips every
// analyzer that needs those Kubernetes objects (istio pkg/config/analysis/local/istiod_analyze.go:
// AddReaderKubeSource leaves out kuberesource.DefaultExcludedSchemas, and internalAnalyze's
// RemoveSkipped drops the analyzers whose inputs are missing). This command does what istioctl
// analyze does (istioctl/pkg/analyze/analyze.go: AllCombined analyzers, every namespace, the
// istio-system root namespace, AddDefaultResources, output through istioctl's own formatting) but
// reads the files as istio's analyzer tests do, with AddTestReaderKubeSource, which keeps them
// (pkg/config/analysis/analyzers/analyzers_test.go, setupAnalyzerForCase). It prints every
// message, Info and up, as istioctl's `-o json`, and the skipped analyzers on stderr; it exits 1 when
// a file cannot be read or parsed, never when a message is found.
package main

import (
	"fmt"
	"os"

	"istio.io/istio/istioctl/pkg/util/formatting"
	"istio.io/istio/pkg/config/analysis/analyzers"
	"istio.io/istio/pkg/config/analysis/local"
	"istio.io/istio/pkg/config/resource"
	"istio.io/istio/pkg/log"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintf(os.Stderr, "istio-analyze-with-workloads: %v\n", err)
		os.Exit(1)
	}
}

func run(files []string) error {
	if len(files) == 0 {
		return fmt.Errorf("give the YAML files to analyze")
	}
	// istio's log (informers syncing) goes to stderr, warnings and up, as istioctl's does; stdout is the messages.
	logOptions := log.DefaultOptions()
	logOptions.OutputPaths = []string{"stderr"}
	for _, scope := range log.Scopes() {
		logOptions.SetDefaultOutputLevel(scope.Name(), log.WarnLevel)
	}
	if err := log.Configure(logOptions); err != nil {
		return err
	}
	analyzer := local.NewIstiodAnalyzer(analyzers.AllCombined(), resource.Namespace(""), resource.Namespace("istio-system"), nil)
	var readers []local.ReaderSource
	for _, name := range files {
		file, err := os.Open(name)
		if err != nil {
			return err
		}
		defer file.Close()
		readers = append(readers, local.ReaderSource{Name: name, Reader: file})
	}
	// The files first: AddDefaultResources reads its own through AddReaderKubeSource, and the first
	// reader source fixes which kinds are kept.
	if err := analyzer.AddTestReaderKubeSource(readers); err != nil {
		return fmt.Errorf("reading the files: %w", err)
	}
	if err := analyzer.AddDefaultResources(); err != nil {
		return err
	}
	cancel := make(chan struct{})
	result, err := analyzer.Analyze(cancel)
	if err != nil {
		return err
	}
	for _, skipped := range result.SkippedAnalyzers {
		fmt.Fprintf(os.Stderr, "skipped analyzer: %s\n", skipped)
	}
	output, err := formatting.Print(*result.Messages.SetDocRef("istioctl-analyze"), formatting.JSONFormat, false)
	if err != nil {
		return err
	}
	fmt.Println(output)
	return nil
}
