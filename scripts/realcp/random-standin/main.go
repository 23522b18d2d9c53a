// Command pulumi-resource-random is a STAND-IN for Pulumi's random provider, serving only the one
// resource Entryway uses, random:index/randomPassword:RandomPassword, over the same provider
// protocol (pulumirpc.ResourceProvider), so that `pulumi up` of the stack can run here.
//
// Why a stand-in: the real provider (github.com/pulumi/pulumi-random/provider/v4, a Terraform
// bridge of hashicorp/terraform-provider-random with a nested shim module) cannot be had on this
// machine: the Go module proxy answers "403 Forbidden: This module version is not available" for
// its version list, @latest and every release tag tried (v4.18.0 to v4.21.2).
//
// What it models, from the @pulumi/random v4.21.2 SDK (randomPassword.d.ts and .js, generated from
// the provider's schema):
//   - inputs length (required; "the minimum value for length is 1 and, length must also be >=
//     (minUpper + minLower + minNumeric + minSpecial)"), special, upper, lower, numeric, number
//     (default true), minUpper, minLower, minNumeric, minSpecial (default 0), overrideSpecial,
//     keepers; any other input is refused (the SDK's args type has no other);
//   - outputs: the inputs with their defaults, result and bcryptHash (the SDK marks both secret),
//     id "none" as Terraform's random_password has;
//   - every input change, keepers included, replaces the password ("Arbitrary map of values that,
//     when changed, will trigger recreation of resource"); Read gives back the stored state.
//
// Its refusals are proven in test/real/random-standin.test.ts.
package main

import (
	"context"
	"crypto/rand"
	"fmt"
	"math/big"
	"sort"
	"strings"

	"github.com/pulumi/pulumi/sdk/v3/go/common/resource"
	"github.com/pulumi/pulumi/sdk/v3/go/common/resource/plugin"
	"github.com/pulumi/pulumi/sdk/v3/go/pulumi/provider"
	pulumirpc "github.com/pulumi/pulumi/sdk/v3/proto/go"
	"golang.org/x/crypto/bcrypt"
	"google.golang.org/protobuf/types/known/emptypb"
)

const (
	version               = "4.21.2" // the @pulumi/random SDK this stands in for
	passwordType          = "random:index/randomPassword:RandomPassword"
	lowerChars            = "abcdefghijklmnopqrstuvwxyz"
	upperChars            = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
	numericChars          = "0123456789"
	defaultSpecial        = "!@#$%&*()-_=+[]{}<>:?" // terraform-provider-random's default special set
	resourceIDOfTerraform = "none"
)

var booleanInputs = []string{"special", "upper", "lower", "numeric", "number"}
var minimumInputs = []string{"minUpper", "minLower", "minNumeric", "minSpecial"}
var knownInputs = map[string]bool{"length": true, "overrideSpecial": true, "keepers": true}

func init() {
	for _, name := range append(append([]string{}, booleanInputs...), minimumInputs...) {
		knownInputs[name] = true
	}
}

var marshal = plugin.MarshalOptions{KeepUnknowns: true, KeepSecrets: true, SkipNulls: true}

type randomProvider struct {
	pulumirpc.UnimplementedResourceProviderServer
}

func main() {
	if err := provider.Main("random", func(*provider.HostClient) (pulumirpc.ResourceProviderServer, error) {
		return &randomProvider{}, nil
	}); err != nil {
		fmt.Println(err)
	}
}

func (p *randomProvider) GetPluginInfo(context.Context, *emptypb.Empty) (*pulumirpc.PluginInfo, error) {
	return &pulumirpc.PluginInfo{Version: version}, nil
}

func (p *randomProvider) CheckConfig(_ context.Context, req *pulumirpc.CheckRequest) (*pulumirpc.CheckResponse, error) {
	return &pulumirpc.CheckResponse{Inputs: req.GetNews()}, nil
}

func (p *randomProvider) DiffConfig(context.Context, *pulumirpc.DiffRequest) (*pulumirpc.DiffResponse, error) {
	return &pulumirpc.DiffResponse{Changes: pulumirpc.DiffResponse_DIFF_NONE}, nil
}

func (p *randomProvider) Configure(context.Context, *pulumirpc.ConfigureRequest) (*pulumirpc.ConfigureResponse, error) {
	return &pulumirpc.ConfigureResponse{AcceptSecrets: true, SupportsPreview: true, AcceptResources: true}, nil
}

func checkType(t string) error {
	if t != passwordType {
		return fmt.Errorf("this stand-in of the random provider serves only %s, not %s", passwordType, t)
	}
	return nil
}

// Check fills the defaults and refuses what the provider's schema refuses.
func (p *randomProvider) Check(_ context.Context, req *pulumirpc.CheckRequest) (*pulumirpc.CheckResponse, error) {
	if err := checkType(req.GetType()); err != nil {
		return nil, err
	}
	news, err := plugin.UnmarshalProperties(req.GetNews(), marshal)
	if err != nil {
		return nil, err
	}
	var failures []*pulumirpc.CheckFailure
	fail := func(property, reason string) {
		failures = append(failures, &pulumirpc.CheckFailure{Property: property, Reason: reason})
	}
	names := make([]string, 0, len(news))
	for key := range news {
		names = append(names, string(key))
	}
	sort.Strings(names)
	for _, name := range names {
		if !knownInputs[name] && !strings.HasPrefix(name, "__") {
			fail(name, fmt.Sprintf("unknown property %q of %s", name, passwordType))
		}
	}
	for _, name := range booleanInputs {
		if v, ok := news[resource.PropertyKey(name)]; !ok || v.IsNull() {
			news[resource.PropertyKey(name)] = resource.NewBoolProperty(true)
		} else if !v.IsBool() && !v.ContainsUnknowns() {
			fail(name, fmt.Sprintf("%s must be a boolean", name))
		}
	}
	minimums := 0.0
	for _, name := range minimumInputs {
		v, ok := news[resource.PropertyKey(name)]
		switch {
		case !ok || v.IsNull():
			news[resource.PropertyKey(name)] = resource.NewNumberProperty(0)
		case v.IsNumber() && v.NumberValue() >= 0:
			minimums += v.NumberValue()
		case !v.ContainsUnknowns():
			fail(name, fmt.Sprintf("%s must be a number >= 0", name))
		}
	}
	length, ok := news["length"]
	switch {
	case !ok || length.IsNull():
		fail("length", "missing required property 'length'")
	case length.IsNumber():
		if n := length.NumberValue(); n < 1 || n != float64(int(n)) {
			fail("length", fmt.Sprintf("length must be a whole number >= 1, not %v", n))
		} else if n < minimums {
			fail("length", fmt.Sprintf("length (%v) must be >= minUpper + minLower + minNumeric + minSpecial (%v)", n, minimums))
		}
	case !length.ContainsUnknowns():
		fail("length", "length must be a number")
	}
	inputs, err := plugin.MarshalProperties(news, marshal)
	if err != nil {
		return nil, err
	}
	return &pulumirpc.CheckResponse{Inputs: inputs, Failures: failures}, nil
}

// Diff: any change of input replaces the password.
func (p *randomProvider) Diff(_ context.Context, req *pulumirpc.DiffRequest) (*pulumirpc.DiffResponse, error) {
	if err := checkType(req.GetType()); err != nil {
		return nil, err
	}
	olds, err := plugin.UnmarshalProperties(req.GetOldInputs(), marshal)
	if err != nil {
		return nil, err
	}
	news, err := plugin.UnmarshalProperties(req.GetNews(), marshal)
	if err != nil {
		return nil, err
	}
	diff := olds.Diff(news)
	if diff == nil || !diff.AnyChanges() {
		return &pulumirpc.DiffResponse{Changes: pulumirpc.DiffResponse_DIFF_NONE}, nil
	}
	var changed []string
	for _, key := range diff.ChangedKeys() {
		changed = append(changed, string(key))
	}
	sort.Strings(changed)
	return &pulumirpc.DiffResponse{
		Changes:             pulumirpc.DiffResponse_DIFF_SOME,
		Diffs:               changed,
		Replaces:            changed,
		DeleteBeforeReplace: false,
	}, nil
}

func pick(charset string) (byte, error) {
	n, err := rand.Int(rand.Reader, big.NewInt(int64(len(charset))))
	if err != nil {
		return 0, err
	}
	return charset[n.Int64()], nil
}

// generate makes a password as terraform-provider-random does: the minimums of each class first,
// the rest from every enabled class, then shuffled.
func generate(inputs resource.PropertyMap) (string, error) {
	flag := func(name string) bool { return inputs[resource.PropertyKey(name)].BoolValue() }
	count := func(name string) int { return int(inputs[resource.PropertyKey(name)].NumberValue()) }
	special := defaultSpecial
	if v, ok := inputs["overrideSpecial"]; ok && v.IsString() {
		special = v.StringValue()
	}
	classes := []struct {
		on      bool
		chars   string
		minimum int
	}{
		{flag("lower"), lowerChars, count("minLower")},
		{flag("upper"), upperChars, count("minUpper")},
		{flag("numeric") && flag("number"), numericChars, count("minNumeric")},
		{flag("special"), special, count("minSpecial")},
	}
	var all strings.Builder
	var out []byte
	for _, class := range classes {
		if !class.on {
			continue
		}
		all.WriteString(class.chars)
		for i := 0; i < class.minimum; i++ {
			c, err := pick(class.chars)
			if err != nil {
				return "", err
			}
			out = append(out, c)
		}
	}
	if all.Len() == 0 {
		return "", fmt.Errorf("every character class is off: nothing to make a password of")
	}
	for len(out) < int(inputs["length"].NumberValue()) {
		c, err := pick(all.String())
		if err != nil {
			return "", err
		}
		out = append(out, c)
	}
	for i := len(out) - 1; i > 0; i-- {
		j, err := rand.Int(rand.Reader, big.NewInt(int64(i+1)))
		if err != nil {
			return "", err
		}
		out[i], out[j.Int64()] = out[j.Int64()], out[i]
	}
	return string(out), nil
}

func (p *randomProvider) Create(_ context.Context, req *pulumirpc.CreateRequest) (*pulumirpc.CreateResponse, error) {
	if err := checkType(req.GetType()); err != nil {
		return nil, err
	}
	inputs, err := plugin.UnmarshalProperties(req.GetProperties(), marshal)
	if err != nil {
		return nil, err
	}
	outputs := inputs.Copy()
	if req.GetPreview() {
		outputs["result"] = resource.MakeComputed(resource.NewStringProperty(""))
		outputs["bcryptHash"] = resource.MakeComputed(resource.NewStringProperty(""))
	} else {
		password, err := generate(inputs)
		if err != nil {
			return nil, err
		}
		hash, err := bcrypt.GenerateFromPassword([]byte(password), bcrypt.DefaultCost)
		if err != nil {
			return nil, err
		}
		outputs["result"] = resource.MakeSecret(resource.NewStringProperty(password))
		outputs["bcryptHash"] = resource.MakeSecret(resource.NewStringProperty(string(hash)))
	}
	properties, err := plugin.MarshalProperties(outputs, marshal)
	if err != nil {
		return nil, err
	}
	return &pulumirpc.CreateResponse{Id: resourceIDOfTerraform, Properties: properties}, nil
}

func (p *randomProvider) Read(_ context.Context, req *pulumirpc.ReadRequest) (*pulumirpc.ReadResponse, error) {
	if err := checkType(req.GetType()); err != nil {
		return nil, err
	}
	return &pulumirpc.ReadResponse{Id: req.GetId(), Properties: req.GetProperties(), Inputs: req.GetInputs()}, nil
}

func (p *randomProvider) Update(_ context.Context, req *pulumirpc.UpdateRequest) (*pulumirpc.UpdateResponse, error) {
	// Diff replaces on every change, so the engine never asks for an update with changes.
	return &pulumirpc.UpdateResponse{Properties: req.GetOlds()}, checkType(req.GetType())
}

func (p *randomProvider) Delete(_ context.Context, req *pulumirpc.DeleteRequest) (*emptypb.Empty, error) {
	return &emptypb.Empty{}, checkType(req.GetType())
}
