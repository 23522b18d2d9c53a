import { copyFileSync, cpSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { MAX_STATEFULSET_NAME, objectName, statefulSetName } from "../../components/shared/names";
import { helmBinaries, helmTemplate, repoRoot } from "../../testkit/harness/helm";

// The chart's name helpers and objectName() / statefulSetName() must agree, long names included:
// both front ends make the same objects only if they name them alike.
const chart = mkdtempSync(path.join(os.tmpdir(), "entryway-names-chart-"));
cpSync(path.join(repoRoot, "test/fixtures/names-chart"), chart, { recursive: true });
copyFileSync(path.join(repoRoot, "charts/entryway/templates/_helpers.tpl"), path.join(chart, "templates/_helpers.tpl"));
afterAll(() => rmSync(chart, { recursive: true, force: true }));

const parts = [
  "exec-gateway",
  "ws-alice",
  `ws-${"a".repeat(30)}-authorized-keys`,
  `ws-${"b".repeat(60)}`,
  `ws-${"c".repeat(45)}-x`,
  "ansibleforms-mysql",
  `remote-rte-${"d".repeat(3)}`,
];

describe.each(helmBinaries().map((h) => [h.major, h] as const))(
  "helm %i names objects as objectName() does",
  (_major, helm) => {
    for (const release of ["entryway", "r".repeat(40)]) {
      it(`release name of ${release.length} characters`, () => {
        const values = path.join(chart, "values.yaml");
        writeFileSync(values, JSON.stringify({ parts }));
        const [configMap] = helmTemplate(helm, chart, { valuesFiles: [values], releaseName: release });
        const data = configMap.data as Record<string, string>;
        parts.forEach((part, i) => {
          expect(data[`n${i}`]).toBe(objectName(release, part));
          expect(data[`n${i}`].length).toBeLessThanOrEqual(63);
          expect(data[`s${i}`]).toBe(statefulSetName(release, part));
          expect(data[`s${i}`].length).toBeLessThanOrEqual(MAX_STATEFULSET_NAME);
        });
        // The long release makes names between 53 and 63 characters: capped for a StatefulSet only.
        if (release.length === 40) {
          expect(objectName(release, "ansibleforms-mysql")).toHaveLength(59);
          expect(data.s5).not.toBe(data.n5);
        }
      });
    }
  },
);
