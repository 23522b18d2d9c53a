// Command pulumi-gosdkgen writes the Go SDK of the Pulumi package whose schema is <schema.json>
// into <out dir> (one folder per Go package, e.g. <out dir>/entryway), with Pulumi's Go generator.
package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	gogen "github.com/pulumi/pulumi/pkg/v3/codegen/go"
	"github.com/pulumi/pulumi/pkg/v3/codegen/schema"
)

func run(schemaPath, outDir string) error {
	data, err := os.ReadFile(schemaPath)
	if err != nil {
		return err
	}
	var spec schema.PackageSpec
	if err := json.Unmarshal(data, &spec); err != nil {
		return fmt.Errorf("%s: %w", schemaPath, err)
	}
	// The null loader: the package has no dependencies on other packages' schemas.
	pkg, diags, err := schema.BindSpec(spec, schema.NewNullLoader(), schema.ValidationOptions{})
	if err != nil {
		return err
	}
	if diags.HasErrors() {
		return fmt.Errorf("%s: %s", schemaPath, diags.Error())
	}
	files, err := gogen.GeneratePackage("pulumi-gosdkgen", pkg, nil)
	if err != nil {
		return err
	}
	for name, content := range files {
		out := filepath.Join(outDir, name)
		if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(out, content, 0o644); err != nil {
			return err
		}
	}
	return nil
}

func main() {
	if len(os.Args) != 3 {
		fmt.Fprintln(os.Stderr, "usage: pulumi-gosdkgen <schema.json> <out dir>")
		os.Exit(2)
	}
	if err := run(os.Args[1], os.Args[2]); err != nil {
		fmt.Fprintln(os.Stderr, "pulumi-gosdkgen:", err)
		os.Exit(1)
	}
}
