"""The losses of a self-play run, generation by generation: a plot and a Markdown table.

    python scripts/selfplay_losses.py RUN_DIR [--out RUN_DIR/losses.png] [--every N]

Reads the ``generation`` lines of ``RUN_DIR/metrics.jsonl`` (``cli.py selfplay`` writes
one per training step), draws the total, policy and value losses against the generation
into a PNG (matplotlib) and prints a table of them (every ``--every``-th generation, the
first and the last always), with the resignation counts where the run resigns.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path


def generation_lines(run_dir: Path) -> list[dict]:
    """The run's per-generation metrics lines, in order."""
    path = run_dir / "metrics.jsonl"
    if not path.exists():
        raise FileNotFoundError(f"{path}: no such file (is {run_dir} a self-play run directory?)")
    records = []
    for line in path.read_text().splitlines():
        try:
            record = json.loads(line)
        except json.JSONDecodeError:
            continue  # a line cut short by a kill
        if record.get("kind") == "generation":
            records.append(record)
    return records


def table(records: list[dict], every: int = 1) -> str:
    """A Markdown table of the losses (and resignations, where counted)."""
    resigns = all("resigned_games" in r for r in records)
    head = "| generation | cases | loss | policy loss | value loss |"
    rule = "|-----------:|------:|-----:|------------:|-----------:|"
    if resigns:
        head += " resigned | false positives |"
        rule += "---------:|----------------:|"
    lines = [head, rule]
    for i, r in enumerate(records):
        if i % every and i != len(records) - 1:
            continue
        row = f"| {r['generation']} | {r['cases']:,} | {r['loss']:.3f} | {r['policy_loss']:.3f} | {r['value_loss']:.3f} |"
        if resigns:
            fp = f"{r['false_positives']}/{r['would_resign_games']}" if r["would_resign_games"] else "-"
            row += f" {r['resigned_games']} | {fp} |"
        lines.append(row)
    return "\n".join(lines)


def plot(records: list[dict], out: Path, title: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    generations = [r["generation"] for r in records]
    fig, ax = plt.subplots(figsize=(7, 4))
    for key, label in (("loss", "loss (policy + value + L2)"), ("policy_loss", "policy cross-entropy"),
                       ("value_loss", "value loss")):
        ax.plot(generations, [r[key] for r in records], marker="o", markersize=3, label=label)
    ax.set_xlabel("generation")
    ax.set_ylabel("loss (last epoch's mean)")
    ax.set_title(title)
    ax.legend()
    fig.tight_layout()
    fig.savefig(out, format="png")
    plt.close(fig)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("run_dir", type=Path, help="a self-play run directory")
    parser.add_argument("--out", type=Path, help="the PNG to write (default RUN_DIR/losses.png)")
    parser.add_argument("--every", type=int, default=1, help="table rows: every Nth generation (default 1)")
    args = parser.parse_args(argv)
    try:
        records = generation_lines(args.run_dir)
    except FileNotFoundError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    if not records:
        print(f"error: {args.run_dir}: no generation has been trained yet", file=sys.stderr)
        return 2
    out = args.out or args.run_dir / "losses.png"
    plot(records, out, f"self-play losses: {args.run_dir.name}")
    print(table(records, max(1, args.every)))
    print(f"\nplot: {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
