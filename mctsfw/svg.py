"""Pieces of SVG board pictures that game plugins draw through ``mctsfw_board_svg``.

A picture is a plain SVG document. Every place a person may click carries the action it
plays as ``data-action="N"`` (the web board sends that number; the game's rules judge
it), and the agent's thinking is drawn as a heat layer: ``heat`` maps actions to their
share of the search's visits, and the places with a share get a translucent orange mark
whose strength follows the share, with the share in per cent on the most visited ones.
These helpers hold what the boards share (the document, stones, the heat marks, a square
grid for Go and Gomoku), so each game's hook draws only its own geometry.
"""

from __future__ import annotations

from html import escape
from typing import Iterable

#: the fill of player 1's and player 2's stones on boards that use black and white
STONE_COLOURS = {1: "#111111", 2: "#f4f4f4"}
#: the heat marks' colour
HEAT_COLOUR = "#ff7f0e"
#: how many of the most visited places have their share written on them (in per cent)
HEAT_LABELS = 3


def document(width: float, height: float, body: Iterable[str], title: str = "") -> str:
    """A standalone SVG picture of ``width`` x ``height`` user units that scales to its box."""
    head = (f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {width:.1f} {height:.1f}" '
            f'width="{width:.0f}" height="{height:.0f}" class="board" font-family="sans-serif">')
    return "\n".join([head, f"<title>{escape(title)}</title>" if title else "", *body, "</svg>"])


def attrs(**values) -> str:
    """``key="value"`` pairs (underscores become dashes), values escaped; None left out."""
    return " ".join(f'{k.rstrip("_").replace("_", "-")}="{escape(str(v))}"' for k, v in values.items() if v is not None)


def stone(x: float, y: float, radius: float, fill: str, last: bool = False) -> str:
    """A stone; the last move's has a ring in the contrasting colour, so it stands out on any board."""
    ring = "#ffffff" if fill.lower() in ("#111111", "#000000", "black") else "#111111"
    parts = [f'<circle {attrs(cx=f"{x:.1f}", cy=f"{y:.1f}", r=f"{radius:.1f}", fill=fill, stroke="#333333")}/>']
    if last:
        parts.append(f'<circle {attrs(cx=f"{x:.1f}", cy=f"{y:.1f}", r=f"{radius * 0.45:.1f}", fill="none", stroke=ring, stroke_width=f"{max(1.5, radius * 0.12):.1f}", class_="last-move")}/>')
    return "".join(parts)


def heat_mark(x: float, y: float, radius: float, share: float, top_share: float, label: bool) -> str:
    """The agent's share of visits on one place: a disc whose strength grows with the square
    of the share over the largest one (a search that still spreads its visits over many
    moves shows its few favourites, not an even orange board), and the per cent if ``label``."""
    if share <= 0:
        return ""
    strength = 0.08 + 0.72 * (share / top_share if top_share else 0) ** 2
    parts = [f'<circle {attrs(cx=f"{x:.1f}", cy=f"{y:.1f}", r=f"{radius:.1f}", fill=HEAT_COLOUR, fill_opacity=f"{strength:.2f}", class_="heat", pointer_events="none")}/>']
    if label:
        parts.append(f'<text {attrs(x=f"{x:.1f}", y=f"{y + radius * 0.3:.1f}", font_size=f"{radius * 0.8:.1f}", text_anchor="middle", fill="#000000", pointer_events="none", class_="heat-label")}>{share * 100:.0f}</text>')
    return "".join(parts)


def heat_layer(heat: dict[int, float] | None, centres: dict[int, tuple[float, float]], radius: float) -> list[str]:
    """Heat marks for every action of ``heat`` that has a place in ``centres``."""
    if not heat:
        return []
    shown = {a: share for a, share in heat.items() if a in centres and share > 0}
    if not shown:
        return []
    top = max(shown.values())
    labelled = sorted(shown, key=shown.get, reverse=True)[:HEAT_LABELS]
    return [heat_mark(*centres[a], radius, share, top, a in labelled) for a, share in shown.items()]


def grid_board(size: int, stones: dict[int, int], cell_action, *, column_names: str, row_names: list[str],
               last_action: int | None, heat: dict[int, float] | None, stars: Iterable[int] = (),
               title: str = "") -> str:
    """A square grid of ``size`` lines each way with stones on the intersections (Go, Gomoku).

    ``stones`` maps actions to the player whose stone is there; ``cell_action(row_from_top,
    col)`` is the action of an intersection; ``row_names`` label the rows from the top;
    ``stars`` are actions drawn as star points."""
    step, margin = 36.0, 40.0
    width = 2 * margin + step * (size - 1)
    body = [f'<rect {attrs(x=0, y=0, width=f"{width:.1f}", height=f"{width:.1f}", fill="#dcb468")}/>']
    for i in range(size):
        p = margin + i * step
        end = margin + step * (size - 1)
        body.append(f'<line {attrs(x1=f"{margin:.1f}", y1=f"{p:.1f}", x2=f"{end:.1f}", y2=f"{p:.1f}", stroke="#4a3510")}/>')
        body.append(f'<line {attrs(x1=f"{p:.1f}", y1=f"{margin:.1f}", x2=f"{p:.1f}", y2=f"{end:.1f}", stroke="#4a3510")}/>')
        for y in (margin * 0.45, width - margin * 0.3):
            body.append(f'<text {attrs(x=f"{p:.1f}", y=f"{y:.1f}", font_size=13, text_anchor="middle", fill="#4a3510")}>{escape(column_names[i])}</text>')
        for x in (margin * 0.4, width - margin * 0.4):
            body.append(f'<text {attrs(x=f"{x:.1f}", y=f"{p + 4:.1f}", font_size=13, text_anchor="middle", fill="#4a3510")}>{escape(row_names[i])}</text>')
    centres = {}
    for r in range(size):
        for c in range(size):
            centres[cell_action(r, c)] = (margin + c * step, margin + r * step)
    for a in stars:
        x, y = centres[a]
        body.append(f'<circle {attrs(cx=f"{x:.1f}", cy=f"{y:.1f}", r=3.5, fill="#4a3510")}/>')
    for a, player in stones.items():
        body.append(stone(*centres[a], step * 0.46, STONE_COLOURS[player], last=a == last_action))
    body += heat_layer({a: s for a, s in (heat or {}).items() if a not in stones}, centres, step * 0.4)
    # the click targets last, on top: transparent squares around every intersection
    for a, (x, y) in centres.items():
        body.append(f'<rect {attrs(x=f"{x - step / 2:.1f}", y=f"{y - step / 2:.1f}", width=f"{step:.1f}", height=f"{step:.1f}", fill="transparent", class_="cell", data_action=a)}/>')
    return document(width, width, body, title)
