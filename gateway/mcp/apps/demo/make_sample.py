"""make_sample.py: writes sample-result.json, an exec_code tool result as the
gateway would send it to an MCP Apps host once it adds the outputs (REST
`output` items, in result._meta["codebox/outputs"]): real bundles from
IPython's formatters for a pandas DataFrame, a matplotlib figure (PNG and
SVG), Markdown, LaTeX and JSON, and hand-written Plotly and Vega-Lite
specs (plotly and altair are not on this machine). For the demo host only.
Run: /usr/bin/python3 make_sample.py"""
import base64
import io
import json
import os

import matplotlib
matplotlib.use("agg")
import matplotlib.pyplot as plt
import pandas as pd
from IPython.core.formatters import DisplayFormatter
from IPython.display import JSON, Latex, Markdown

fmt = DisplayFormatter()


def bundle(obj):
    data, metadata = fmt.format(obj)
    return {"data": data, "metadata": metadata}


df = pd.DataFrame({"city": ["Lyon", "Oslo", "Lima", "Kobe"],
                   "temp_c": [14.2, 3.9, 19.0, 16.5],
                   "rain_mm": [61, 72, 5, 110]})
fig, ax = plt.subplots(figsize=(4, 2.4), dpi=80)
ax.bar(df.city, df.temp_c, color="#4c78a8")
ax.set_title("matplotlib (PNG)")
png = io.BytesIO()
fig.savefig(png, format="png")
svg = io.StringIO()
ax.set_title("matplotlib (SVG)")
fig.savefig(svg, format="svg")

plotly_fig = {
    "data": [{"type": "scatter", "mode": "lines+markers", "name": "temp",
              "x": list(df.city), "y": list(df.temp_c)},
             {"type": "bar", "name": "rain", "x": list(df.city), "y": list(df.rain_mm),
              "yaxis": "y2", "opacity": 0.5}],
    "layout": {"title": {"text": "Plotly"}, "height": 320,
               "yaxis2": {"overlaying": "y", "side": "right"}},
}
vega_lite = {
    "$schema": "https://vega.github.io/schema/vega-lite/v5.json",
    "title": "Vega-Lite",
    "data": {"values": df.to_dict(orient="records")},
    "mark": "bar",
    "encoding": {"x": {"field": "city", "type": "nominal"},
                 "y": {"field": "rain_mm", "type": "quantitative"},
                 "tooltip": [{"field": "temp_c"}]},
    "width": 300, "height": 160,
}

outputs = [
    {"type": "stream", "name": "stdout", "content": "loaded 4 rows\n"},
    {"type": "result", **bundle(df)},
    {"type": "display", "data": {"image/png": base64.b64encode(png.getvalue()).decode(),
                                 "text/plain": "<Figure size 320x192 with 1 Axes>"}},
    {"type": "display", "data": {"image/svg+xml": svg.getvalue(),
                                 "text/plain": "<Figure size 320x192 with 1 Axes>"}},
    {"type": "display", "data": {"application/vnd.plotly.v1+json": plotly_fig,
                                 "text/html": "<div>a Plotly figure</div>",
                                 "text/plain": "Figure()"}},
    {"type": "display", "data": {"application/vnd.vegalite.v5+json": vega_lite,
                                 "text/plain": "alt.Chart(...)"}},
    {"type": "display", **bundle(Markdown("## Markdown\n\nSome **bold** text, a list:\n\n"
                                          "- one\n- two <img src=x onerror=alert(1)>\n"))},
    {"type": "display", **bundle(Latex(r"$$\int_0^1 x^2\,dx = \frac{1}{3}$$"))},
    {"type": "display", **bundle(JSON({"rows": 4, "columns": list(df.columns),
                                       "nested": {"ok": True, "none": None}}))},
    {"type": "stream", "name": "stderr", "content": "a warning on stderr\n"},
    {"type": "error", "ename": "ZeroDivisionError", "evalue": "division by zero",
     "traceback": ["\x1b[0;31mZeroDivisionError\x1b[0m: division by zero"]},
]
result = {
    "content": [{"type": "text", "text": "loaded 4 rows\n(the text the model sees)"}],
    "structuredContent": {"status": "error", "execution_count": 1},
    "isError": True,
    "_meta": {"codebox/outputs": outputs},
}
here = os.path.dirname(os.path.abspath(__file__))
with open(os.path.join(here, "sample-result.json"), "w") as f:
    json.dump(result, f, indent=1)
print("wrote sample-result.json")
