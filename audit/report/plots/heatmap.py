"""A matrix drawn as coloured cells: seaborn's ``heatmap``, without seaborn.

:func:`heatmap` draws what ``seaborn.heatmap`` (seaborn 0.13) draws for the options the
reports use -- the same artists, made in the same order, so the same bytes -- with two
differences:

* it imports no seaborn, nor the scipy.stats that seaborn imports (about a second in
  each process that draws a heat map);
* it does not draw the whole figure to find out whether the tick labels overlap.
  seaborn does, in each call, so that a figure of ``k`` heat maps was drawn ``k`` times
  before it was saved: 14 of the 18 CPU-seconds of nine 8 x 8 matrices.  The reports
  set the labels' rotation themselves afterwards, which overrode what that draw
  decided.

``tests/test_plots_theme.py`` checks the PNG against seaborn's for the options of both
of the reports' heat maps.
"""

from __future__ import annotations

import numpy as np

#: The relative luminance of a cell above which its text is dark (seaborn's threshold).
LIGHT_CELL = 0.408


def relative_luminance(rgba: np.ndarray) -> np.ndarray:
    """The W3C relative luminance of colours (rows of red, green, blue[, alpha] from 0
    to 1), as seaborn computes it for the text of a cell."""
    rgb = np.asarray(rgba, dtype=float)[..., :3]
    rgb = np.where(rgb <= 0.03928, rgb / 12.92, ((rgb + 0.055) / 1.055) ** 2.4)
    return rgb.dot([0.2126, 0.7152, 0.0722])


def heatmap(
    ax,
    data,
    *,
    cmap,
    norm=None,
    vmin: float | None = None,
    vmax: float | None = None,
    mask=None,
    annot=None,
    fmt: str = ".2g",
    annot_kws: dict | None = None,
    linewidths: float = 0.0,
    linecolor="white",
    square: bool = False,
    cbar: bool = True,
    cbar_ax=None,
    cbar_kws: dict | None = None,
    xticklabels=(),
    yticklabels=(),
):
    """Draw the matrix ``data`` into ``ax`` as ``seaborn.heatmap`` does with the same
    arguments; returns the QuadMesh.

    Parameters
    ----------
    ax
        The Axes drawn on.
    data
        A 2-D array (or DataFrame, whose index and column names become the axis labels);
        a NaN cell is masked.
    cmap
        A colour map, or the name of one of matplotlib's or seaborn's
        (:func:`audit.report.plots.colormaps.colormap`).
    norm, vmin, vmax
        The colour scale: ``norm``, or else ``vmin`` and ``vmax`` (default: the least
        and the greatest value drawn).
    mask
        Cells left blank (True).
    annot, fmt, annot_kws
        ``True`` writes each cell's value formatted by ``fmt``; an array of the shape of
        ``data`` writes its own values (``fmt=""`` for texts).  ``annot_kws`` is passed
        to each :meth:`~matplotlib.axes.Axes.text`.
    linewidths, linecolor
        The lines between cells.
    square
        Square cells.
    cbar, cbar_ax, cbar_kws
        A colour bar (in ``cbar_ax`` when given), with ``cbar_kws`` passed to
        :meth:`~matplotlib.figure.Figure.colorbar`.
    xticklabels, yticklabels
        A label for each column and each row, in the middle of its cells.
    """
    from audit.report.plots.colormaps import colormap

    frame_names = (getattr(data, "columns", None), getattr(data, "index", None))
    values = np.asarray(data)
    hidden = np.zeros(values.shape, bool) if mask is None else np.array(mask, dtype=bool)
    hidden |= np.isnan(values.astype(float))
    plot_data = np.ma.masked_where(hidden, values)
    if annot is None or annot is False:
        annot_data = None
    else:
        annot_data = plot_data if isinstance(annot, bool) else np.asarray(annot)
        if annot_data.shape != plot_data.shape:
            raise ValueError("`data` and `annot` must have same shape.")
    cmap = colormap(cmap)
    if square:
        ax.set_aspect("equal")
    for spine in ax.spines.values():  # seaborn's despine(left=True, bottom=True)
        spine.set_visible(False)
    kws = {"linewidths": linewidths, "edgecolor": linecolor}
    if norm is None:
        calc = plot_data.astype(float).filled(np.nan)
        kws["vmin"] = np.nanmin(calc) if vmin is None else vmin
        kws["vmax"] = np.nanmax(calc) if vmax is None else vmax
    else:
        kws["norm"] = norm
    mesh = ax.pcolormesh(plot_data, cmap=cmap, **kws)
    ax.set(xlim=(0, values.shape[1]), ylim=(0, values.shape[0]))
    ax.invert_yaxis()
    if cbar:
        bar = ax.figure.colorbar(mesh, cbar_ax, ax, **(cbar_kws or {}))
        bar.outline.set_linewidth(0)
    xticklabels, yticklabels = list(xticklabels), list(yticklabels)
    ax.set(
        xticks=np.arange(len(xticklabels)) + 0.5 if xticklabels else [],
        yticks=np.arange(len(yticklabels)) + 0.5 if yticklabels else [],
    )
    ax.set_xticklabels(xticklabels)
    for label in ax.set_yticklabels(yticklabels, rotation="vertical"):
        label.set_verticalalignment("center")
    columns, index = frame_names
    ax.set(
        xlabel=(columns.name or "") if columns is not None else "",
        ylabel=(index.name or "") if index is not None else "",
    )
    if annot_data is not None:
        _annotate(ax, mesh, annot_data, fmt, annot_kws or {})
    return mesh


def _annotate(ax, mesh, annot_data, fmt: str, annot_kws: dict) -> None:
    """Each unmasked cell's text, dark on a light cell and white on a dark one."""
    mesh.update_scalarmappable()
    height, width = annot_data.shape
    xpos, ypos = np.meshgrid(np.arange(width) + 0.5, np.arange(height) + 0.5)
    colours = mesh.get_facecolors()
    light = relative_luminance(colours) > LIGHT_CELL
    for x, y, m, bright, value in zip(
        xpos.flat, ypos.flat, mesh.get_array().flat, light, annot_data.flat, strict=False
    ):
        if m is not np.ma.masked:
            kwargs = {"color": ".15" if bright else "w", "ha": "center", "va": "center"}
            kwargs.update(annot_kws)
            ax.text(x, y, ("{:" + fmt + "}").format(value), **kwargs)


__all__ = ["LIGHT_CELL", "heatmap", "relative_luminance"]
