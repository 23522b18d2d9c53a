// The benchmarks' large stack: bench:render and bench:scale grow the dev stack the same way.

/**
 * Replaces `stack`'s workspaces by `count` copies of its first (user0, user1, ..., each key's
 * comment renamed), and returns them. `source` names the stack file in the error for a stack
 * without workspaces.
 */
export function growWorkspaces(
  stack: { workspaces?: Record<string, unknown>[] },
  count: number,
  source: string,
): Record<string, unknown>[] {
  const template = stack.workspaces?.[0];
  if (!template) throw new Error(`${source} has no workspace to copy`);
  const keys = template.authorizedKeys as string[];
  stack.workspaces = Array.from({ length: count }, (_, i) => ({
    ...template,
    name: `user${i}`,
    authorizedKeys: keys.map((key) => key.replace(/\S+$/, `u${i}@laptop`)),
  }));
  return stack.workspaces;
}
