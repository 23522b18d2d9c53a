// The exec gateway on Kubernetes: the component, its args, the facts the chart shares with it, and
// the checks the Stack runs before it makes the gateway.
export * from "./args";
export * from "./contract";
export * from "./validate";
export { ExecGateway } from "./exec-gateway";
