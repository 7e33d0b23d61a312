"""Browse images drawn from a granule's data: its main variable through a colour map, north up,
with a colour scale and the variable's name and units under it.

Pillow and numpy only: a colour map is a few anchor colours interpolated, which matplotlib
would bring along with about ten more packages (contourpy, fonttools, kiwisolver ...) for one
picture per granule.
"""
import io

import numpy
from PIL import Image, ImageDraw, ImageFont

# Anchor colours of well-known colour maps (ColorBrewer's RdYlBu reversed, a grey ramp for
# infrared where cold cloud tops are white, a snow ramp from bare ground to white).
PALETTES = {
    "thermal": ["#313695", "#4575b4", "#74add1", "#abd9e9", "#e0f3f8", "#ffffbf", "#fee090",
                "#fdae61", "#f46d43", "#d73027", "#a50026"],
    "infrared": ["#ffffff", "#b4b4b4", "#5a5a5a", "#141414"],
    "snow": ["#6b5a45", "#8c8f7a", "#a9c2d6", "#dce9f4", "#ffffff"],
}
NO_DATA = (128, 128, 128)   # land under a sea surface temperature
SEA = (24, 46, 74)           # the sea under snow cover
BAR_HEIGHT = 12
MARGIN = 4


def _rgb(colour):
    return tuple(int(colour[i:i + 2], 16) for i in (1, 3, 5))


def colourise(values, low, high, palette, no_data=NO_DATA):
    """An (h, w, 3) uint8 picture of `values` (NaN: no data) scaled from low to high."""
    anchors = numpy.array([_rgb(c) for c in PALETTES[palette]], dtype="float64")
    where = numpy.linspace(0.0, 1.0, len(anchors))
    scaled = numpy.clip((numpy.asarray(values, dtype="float64") - low) / (high - low), 0, 1)
    flat = numpy.nan_to_num(scaled.ravel(), nan=0.0)
    picture = numpy.stack([numpy.interp(flat, where, anchors[:, k]) for k in range(3)], axis=1)
    picture = picture.reshape((*scaled.shape, 3)).round().astype("uint8")
    picture[numpy.isnan(scaled)] = no_data
    return picture


def render(values, low, high, palette, label, scale=1, no_data=NO_DATA):
    """PNG bytes: the picture of `values` (row 0 is the top), each cell `scale` pixels, over
    a colour scale from `low` to `high` with its ticks and `label` (name and units)."""
    data = Image.fromarray(colourise(values, low, high, palette, no_data), "RGB")
    if scale != 1:
        data = data.resize((data.width * scale, data.height * scale), Image.Resampling.NEAREST)
    font = ImageFont.load_default(size=11)
    text_height = 14
    width = max(data.width, 240)
    height = data.height + MARGIN + BAR_HEIGHT + 2 * text_height + MARGIN
    picture = Image.new("RGB", (width, height), (255, 255, 255))
    picture.paste(data, ((width - data.width) // 2, 0))
    bar_top = data.height + MARGIN
    ramp = numpy.linspace(low, high, width - 2 * MARGIN)[numpy.newaxis, :].repeat(BAR_HEIGHT, 0)
    picture.paste(Image.fromarray(colourise(ramp, low, high, palette), "RGB"), (MARGIN, bar_top))
    draw = ImageDraw.Draw(picture)
    ticks_y = bar_top + BAR_HEIGHT + 1
    for fraction, anchor in ((0.0, "la"), (0.5, "ma"), (1.0, "ra")):
        x = MARGIN + fraction * (width - 2 * MARGIN - 1)
        draw.line([(x, bar_top + BAR_HEIGHT - 3), (x, bar_top + BAR_HEIGHT + 1)], fill=(0, 0, 0))
        draw.text((x, ticks_y), f"{low + fraction * (high - low):g}", fill=(0, 0, 0), font=font,
                  anchor=anchor)
    draw.text((width / 2, ticks_y + text_height), label, fill=(0, 0, 0), font=font, anchor="ma")
    out = io.BytesIO()
    picture.save(out, format="PNG", optimize=False, compress_level=6)
    return out.getvalue()
