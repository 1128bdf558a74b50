"""make_sample.py: writes sample-result.json, an exec_code tool result as the
gateway would send it to an MCP Apps host once it adds the outputs (REST
`output` items, in result._meta["codebox/outputs"]): real bundles from
IPython's formatters for a pandas DataFrame (plain and a Styler with its
<style>), a matplotlib figure (PNG and SVG), Markdown, LaTeX and JSON, and
hand-written Plotly and Vega-Lite specs (plotly and altair are not on this
machine). Also hostile-result.json: kernel HTML and Markdown that try to
run script in the view (each payload would log "XSS-RAN:<name>" to the
console) or load something from outside, beside benign SVG and MathML that
must survive the sanitizer (`shot.sh --hostile`). For the demo host only.
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

styled = df.style.set_uuid("demo").background_gradient(subset=["temp_c"]) \
    .format({"temp_c": "{:.1f}"}).set_caption("pandas Styler")

outputs = [
    {"type": "stream", "name": "stdout", "content": "loaded 4 rows\n"},
    {"type": "result", **bundle(df)},
    {"type": "display", **bundle(styled)},
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


def ran(name):
    """JavaScript that shows a payload ran: a console line shot.sh looks for
    (no quotes, so it fits in any attribute)."""
    return f"console.log(/XSS-RAN:{name}/.source)"


# Each payload is one text/html output; its script may only run if the
# sanitizer lets it through AND the view's CSP allows it. Links and
# clickable parts are there for a driver that clicks them.
HOSTILE_HTML = {
    "script": f"<script>{ran('script')}</script>",
    "img-onerror": f'<img src=x onerror="{ran("img-onerror")}">',
    "svg-onload": f'<svg onload="{ran("svg-onload")}"><rect width=10 height=10 /></svg>',
    "svg-a-xlink": f'<svg width=120 height=30><a xlink:href="javascript:{ran("svg-a-xlink")}">'
                   '<text x=2 y=20>svg link</text></a></svg>',
    "svg-animate-href": '<svg width=120 height=30><a><animate attributeName=href '
                        f'values="javascript:{ran("svg-animate-href")}" />'
                        '<text x=2 y=20>animated link</text></a></svg>',
    "svg-set-handler": f'<svg><rect width=20 height=20><set attributeName=onmouseover '
                       f'to="{ran("svg-set-handler")}" /></rect></svg>',
    "svg-use": '<svg><use href="data:image/svg+xml,&lt;svg id=\'x\' xmlns=\'http://www.w3.org'
               f'/2000/svg\'&gt;&lt;image href=\'1\' onerror=\'{ran("svg-use")}\' /&gt;'
               '&lt;/svg&gt;#x" /></svg>',
    "svg-foreignobject": '<svg><foreignObject width=100 height=50><iframe srcdoc="&lt;script&gt;'
                         f'{ran("svg-foreignobject")}&lt;/script&gt;"></iframe></foreignObject></svg>',
    "iframe-srcdoc": f'<iframe srcdoc="&lt;script&gt;{ran("iframe-srcdoc")}&lt;/script&gt;"></iframe>',
    "iframe-src-js": f'<iframe src="javascript:{ran("iframe-src-js")}"></iframe>',
    "form-action": f'<form action="javascript:{ran("form-action")}"><button>form</button></form>',
    "formaction": f'<input type=submit formaction="javascript:{ran("formaction")}" value=formaction>',
    "input-autofocus": f'<input autofocus onfocus="{ran("input-autofocus")}">',
    "meta-refresh": f'<meta http-equiv="refresh" content="0;url=javascript:{ran("meta-refresh")}">',
    "details-ontoggle": f'<details open ontoggle="{ran("details-ontoggle")}"><summary>s</summary>'
                        'details</details>',
    "math-maction": '<math><maction actiontype="statusline" '
                    f'xlink:href="javascript:{ran("math-maction")}"><mtext>math link</mtext>'
                    '<mtext>status</mtext></maction></math>',
    "math-href": f'<math><mtext href="javascript:{ran("math-href")}">mathml href</mtext></math>',
    "style-import": "<style>@import url(http://127.0.0.1:9/import.css);"
                    "@\\69mport 'http://127.0.0.1:9/import2.css';</style>",
    "style-url": "<style>.bg{background:url(http://127.0.0.1:9/bg.png)}"
                 ".bg2{background:\\75rl(http://127.0.0.1:9/bg2.png)}"
                 ".bg3{--u:\\75rl(http://127.0.0.1:9/bg3.png);background-image:var(--u)}"
                 "@font-face{font-family:evil;src:url(http://127.0.0.1:9/f.woff)}</style>"
                 '<div class="bg bg2 bg3" style="font-family:evil">styled</div>',
    "style-attr-url": '<div style="background-image:url(http://127.0.0.1:9/attr.png)">attr</div>',
    "svg-fill-url": '<svg><rect width=9 height=9 fill="url(http://127.0.0.1:9/fill.svg#p)"/></svg>',
    "a-javascript": f'<a href="javascript:{ran("a-javascript")}">javascript link</a>',
    "a-entity": f'<a href="&#106;avascript:{ran("a-entity")}">entity link</a>',
    "a-target": '<a href="#x" target="_top">top link</a>',
    "object-data": f'<object data="data:text/html,&lt;script&gt;{ran("object-data")}&lt;/script&gt;">'
                   '</object>',
    "embed": f'<embed src="data:text/html,&lt;script&gt;{ran("embed")}&lt;/script&gt;">',
    "base-href": f'<base href="javascript:{ran("base-href")}//"><a href="relative">base link</a>',
    "link-stylesheet": '<link rel=stylesheet href="http://127.0.0.1:9/link.css">',
    "noscript-title": '<noscript><p title="</noscript><img src=x '
                      f'onerror={ran("noscript-title")}>"></noscript>',
    "template": f'<template><img src=x onerror="{ran("template")}"></template>',
    "template-shadowroot": '<div><template shadowrootmode=open><img src=x '
                           f'onerror="{ran("template-shadowroot")}"></template></div>',
    "mxss-svg-style": '<svg></p><style><a id="</style><img src=1 '
                      f'onerror={ran("mxss-svg-style")}>"></svg>',
    "mxss-math-mglyph": '<math><mtext><table><mglyph><style><img src=x '
                        f'onerror={ran("mxss-math-mglyph")}></style></mglyph></table></mtext></math>',
    "mxss-form-math": '<form><math><mtext></form><form><mglyph><style></math><img src '
                      f'onerror={ran("mxss-form-math")}>',
    "video-source": f'<video><source onerror="{ran("video-source")}"></video>',
    "marquee": f'<marquee onstart="{ran("marquee")}">marquee</marquee>',
    "body-onload": f'<body onload="{ran("body-onload")}">',
    "img-srcset": '<img srcset="http://127.0.0.1:9/srcset.png 1x">',
    "img-remote": '<img src="http://127.0.0.1:9/remote.png">',
    # DOM clobbering: ids and names of the view's globals and document's
    "clobber": '<img id="codeboxRender"><a id="outputs" href="#o">o</a><div id="status">s</div>'
               '<img name="getElementById"><img name="body"><form id="app"></form>'
               '<img name="cookie"><a id="defaultView"></a>',
}
HOSTILE_MARKDOWN = (
    "## Hostile Markdown\n\n"
    f"[md link](javascript:{ran('md-link')}) and "
    f"![md image](javascript:{ran('md-image')}) and "
    f'<img src=x onerror="{ran("md-img-onerror")}"> and '
    f'<svg onload="{ran("md-svg-onload")}"></svg>\n\n'
    f'<a href="javascript:{ran("md-a")}">md raw link</a>\n\n'
    f'<details open ontoggle="{ran("md-details")}"><summary>md</summary>x</details>\n\n'
    "- [x] a task list checkbox stays\n- [ ] unchecked\n"
)
# Must survive: drawing SVG with a gradient (fill="url(#g)"), MathML, a
# data: image, a fragment link.
BENIGN_HTML = (
    '<svg id="benign-svg" width="160" height="40"><defs><linearGradient id="g">'
    '<stop offset="0" stop-color="#4c78a8"/><stop offset="1" stop-color="#f58518"/>'
    '</linearGradient></defs><rect width="160" height="40" fill="url(#g)"/>'
    '<circle cx="20" cy="20" r="12" fill="white"/></svg>'
    '<math id="benign-math"><mfrac><mi>a</mi><mi>b</mi></mfrac></math>'
    '<img id="benign-img" alt="dot" src="data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAAB'
    'CAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==">'
    '<a id="benign-link" href="#benign-svg">fragment link</a>'
)
hostile = [{"type": "display", "data": {"text/html": BENIGN_HTML, "text/plain": "benign"}}]
hostile += [{"type": "display", "data": {"text/html": f'<p class="payload">{name}</p>{html}',
                                         "text/plain": name}}
            for name, html in HOSTILE_HTML.items()]
hostile.append({"type": "display", "data": {"text/markdown": HOSTILE_MARKDOWN,
                                            "text/plain": "markdown"}})
hostile_result = {
    "content": [{"type": "text", "text": "hostile outputs"}],
    "structuredContent": {"status": "ok", "execution_count": 1},
    "isError": False,
    "_meta": {"codebox/outputs": hostile},
}
with open(os.path.join(here, "hostile-result.json"), "w") as f:
    json.dump(hostile_result, f, indent=1)
print("wrote hostile-result.json")
