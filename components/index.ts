// The Entryway library: every component and its args, for platform repos to import.
export * from "./stack";
export * from "./ansibleforms";
export * from "./exec-gateway";
export * from "./shared/image";
export * from "./shared/labels";
export * from "./shared/names";
export * from "./shared/network";
export * from "./shared/pod";
export * from "./shared/secret";
export * from "./shared/security";
export * from "./ssh/connect-gateway";
export * from "./ssh/contract";
export * from "./ssh/ssh-workspace";
