"""Reports how a Python Pulumi program uses a generated component SDK, for the schema check in
testkit/harness/package-schema.ts (checkPythonProgram): python3 python-calls.py <program> <module>.

Prints JSON: {"calls": [{variable, className, line, keywords}], "attributeReads": [[variable,
attribute]]} for every `<variable> = <alias>.<Class>(...)` where `import <module> as <alias>`,
and every `<variable>.<attribute>` read of such a variable. Keyword values are the literals
(ast.literal_eval's kinds); anything else is "${python:<source>}".
"""

import ast
import json
import sys


def literal(node):
    if isinstance(node, ast.Dict):
        return {literal(k): literal(v) for k, v in zip(node.keys, node.values)}
    if isinstance(node, (ast.List, ast.Tuple)):
        return [literal(e) for e in node.elts]
    if isinstance(node, ast.Constant):
        return node.value
    return "${python:" + ast.unparse(node) + "}"


def main(path, module):
    tree = ast.parse(open(path, encoding="utf-8").read(), path)
    aliases = {a.asname or a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names if a.name == module}
    calls = []
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name)):
            continue
        call = node.value
        if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute) and isinstance(call.func.value, ast.Name)):
            continue
        if call.func.value.id not in aliases:
            continue
        calls.append({
            "variable": node.targets[0].id,
            "className": call.func.attr,
            "line": node.lineno,
            "keywords": {k.arg: literal(k.value) for k in call.keywords if k.arg is not None},
        })
    variables = {c["variable"] for c in calls}
    reads = [[n.value.id, n.attr] for n in ast.walk(tree)
             if isinstance(n, ast.Attribute) and isinstance(n.value, ast.Name) and n.value.id in variables]
    print(json.dumps({"calls": calls, "attributeReads": reads}))


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
