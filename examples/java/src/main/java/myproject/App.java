// An SSH workspace behind its CONNECT gateway, the exec gateway, and AnsibleForms with a remote
// RTE, from the Entryway component package's generated Java SDK (package com.pulumi.entryway).
// test/provider/examples.test.ts checks the classes, builder methods and enum members here against
// schema.json; the Java SDK cannot be generated on the machine that runs the tests (pulumi-java's
// code generator is not on the Go module proxy), so it is not compiled there.
package myproject;

import com.pulumi.Pulumi;
import com.pulumi.entryway.AnsibleForms;
import com.pulumi.entryway.AnsibleFormsArgs;
import com.pulumi.entryway.ConnectGateway;
import com.pulumi.entryway.ConnectGatewayArgs;
import com.pulumi.entryway.ExecGateway;
import com.pulumi.entryway.ExecGatewayArgs;
import com.pulumi.entryway.RemoteRte;
import com.pulumi.entryway.RemoteRteArgs;
import com.pulumi.entryway.SshWorkspace;
import com.pulumi.entryway.SshWorkspaceArgs;
import com.pulumi.entryway.enums.AnsibleFormsRteMode;
import com.pulumi.entryway.enums.ConnectGatewayServiceType;
import com.pulumi.entryway.enums.ExecGatewayAuthorizer;
import com.pulumi.entryway.enums.ExecGatewayExposureKind;
import com.pulumi.entryway.inputs.AnsibleFormsRteSettingsArgs;
import com.pulumi.entryway.inputs.ExecGatewayExposureArgsArgs;
import com.pulumi.entryway.inputs.SshWorkspaceStorageArgs;

public class App {
    public static void main(String[] args) {
        Pulumi.run(ctx -> {
            var connect = new ConnectGateway("connect", ConnectGatewayArgs.builder()
                .namespace("entryway-connect")
                .hostname("ssh.example.com")
                .serviceType(ConnectGatewayServiceType.LoadBalancer)
                .allowedSourceRanges("203.0.113.0/24")
                .build());

            var alice = new SshWorkspace("alice", SshWorkspaceArgs.builder()
                .gateway(connect.registration())
                .namespace("dev-alice")
                .user("alice")
                .authorizedKeys("ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIGV4YW1wbGUga2V5IGZvciBhbGljZSBvbmx5 alice@example.com")
                .storage(SshWorkspaceStorageArgs.builder().size("20Gi").build())
                .build());

            var exec = new ExecGateway("exec", ExecGatewayArgs.builder()
                .namespace("entryway")
                .targetNamespaces("dev-alice")
                .authorizer(ExecGatewayAuthorizer.Kubernetes)
                .exposure(ExecGatewayExposureArgsArgs.builder()
                    .kind(ExecGatewayExposureKind.Istio)
                    .host("exec.example.com")
                    .tlsSecretName("exec-example-com-tls")
                    .build())
                .build());

            // AnsibleForms whose runner (RTE) runs elsewhere, and that RTE: it dials the app with
            // the token the app generated (a secret output; it stays one in the RTE's Secret).
            var forms = new AnsibleForms("forms", AnsibleFormsArgs.builder()
                .namespace("ansibleforms")
                .rte(AnsibleFormsRteSettingsArgs.builder().mode(AnsibleFormsRteMode.Remote).build())
                .build());
            new RemoteRte("dc2", RemoteRteArgs.builder()
                .namespace("ansibleforms-rte")
                .appUrl(forms.url())
                // The app's in-cluster Service is plain http: allowed here, explicitly.
                .allowInsecureAppUrl(true)
                .token(forms.rteToken().applyValue(token -> token.orElseThrow()))
                .build());

            ctx.export("sshConfig", alice.sshConfig());
            ctx.export("execUrl", exec.url());
            ctx.export("formsUrl", forms.url());
            ctx.export("formsAdminPassword", forms.adminPassword());
        });
    }
}
