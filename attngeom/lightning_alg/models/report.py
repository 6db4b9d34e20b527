"""The sweep tables and figure of docs/beyond.md, from the claims' verdicts.

``python -m attngeom.lightning_alg.models.report --out docs/figures`` runs the three sweeps
(``multihead-join``, ``skip-fibre``, ``causal-dimension``; about 5 s), prints the markdown
tables and writes ``beyond_sweeps.png``.
"""

from __future__ import annotations

import argparse
from pathlib import Path


def sweep_rows() -> dict[str, list[dict]]:
    """claim id -> one row per sweep point: point, P, expected, measured, certified, status."""
    from attngeom.core.claim import CheckContext
    from attngeom.lightning_alg.claims.beyond import CLAIMS

    out = {}
    for claim in CLAIMS:
        verdict = claim.verify({}, "exact", CheckContext())
        out[claim.id] = [{"point": name, "parameters": part["parameters"],
                          "expected": part["formula"], "measured": part["measured_rank"],
                          "fibre": part["fibre_measured_upper_bound"],
                          "certified": part["certified"], "status": part["status"]}
                         for name, part in verdict.evidence["parts"].items()]
    return out


def markdown(rows: dict[str, list[dict]], only_refuted: tuple = ()) -> str:
    lines = []
    for claim, points in rows.items():
        shown = [r for r in points if r["status"] == "refuted"] if claim in only_refuted else points
        held = sum(r["status"] != "refuted" for r in points)
        lines += [f"### `{claim}`: {held} of {len(points)} points hold"
                  + (" (rows: the points that do not)" if claim in only_refuted else ""), "",
                  "| point | P | expected | measured rank | P - rank | certified | status |",
                  "|---|---|---|---|---|---|---|"]
        lines += [f"| {r['point']} | {r['parameters']} | {r['expected']} | {r['measured']} | "
                  f"{r['fibre']} | {r['certified']} | {r['status']} |" for r in shown]
        lines.append("")
    return "\n".join(lines)


def plot(rows: dict[str, list[dict]], out: Path) -> Path:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 3, figsize=(14, 4.2))
    for ax, (claim, points) in zip(axes, rows.items()):
        ok = [r for r in points if r["status"] != "refuted"]
        bad = [r for r in points if r["status"] == "refuted"]
        top = max(r["expected"] for r in points) + 2
        ax.plot([0, top], [0, top], color="0.7", lw=1)
        ax.scatter([r["expected"] for r in ok], [r["measured"] for r in ok], s=18,
                   label="measured = expected")
        if bad:
            ax.scatter([r["expected"] for r in bad], [r["measured"] for r in bad], s=28,
                       marker="x", color="C3", label="defect (measured < expected)")
        ax.set_title(claim)
        ax.set_xlabel("expected dimension (formula)")
        ax.set_ylabel("exact Jacobian rank over F_p")
        ax.legend(fontsize=8)
    fig.tight_layout()
    out.mkdir(parents=True, exist_ok=True)
    path = out / "beyond_sweeps.png"
    fig.savefig(path, dpi=110)
    return path


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--out", default="docs/figures")
    args = parser.parse_args(argv)
    rows = sweep_rows()
    print(markdown(rows, only_refuted=tuple(rows)))
    print(f"figure: {plot(rows, Path(args.out))}")


if __name__ == "__main__":
    main()
