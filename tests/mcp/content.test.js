// What the model sees (issue 38): the `content` an MCP client hands its
// model, through the official SDK client. Every output reaches the text
// item (a DataFrame's text, HTML as readable text, Markdown and LaTeX as
// written, R, Octave, JavaScript and xeus-python results); isError is true
// whenever the code did not complete, over every transport and for the
// one-shot tools; text past CODEBOX_MODEL_TEXT_BYTES keeps its head and
// tail with a marker, and the whole output is saved in the session and
// linked with a resource_link that read_file (in pieces) and resources/read
// open.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { after, before, describe, test } from 'node:test';

import { callTool, CODEBOX_BIN, codeboxEnv, connect, startServer, textOf } from './helpers.js';

const T = { timeout: 120000 };
const MODEL_TEXT_BYTES = 32768;

/* Every item of content that is not the text, by type. */
const others = (r) => r.content.filter((c) => c.type !== 'text').map((c) => c.type);

describe('what the model sees', () => {
  let server;
  let conn;
  let client;
  const exec = (session, code, extra = {}) =>
    callTool(client, 'exec_code', { session_id: session, code, ...extra }, { timeout: 110000 });

  before(async () => {
    server = await startServer();
    conn = await connect('http', { server });
    client = conn.client;
  });

  after(async () => {
    if (conn) await conn.close().catch(() => {});
    if (server) await server.stop();
  });

  test('a DataFrame, HTML, Markdown and LaTeX reach the text as text', T, async () => {
    const frame = await exec('rich', 'import pandas as pd\n'
      + "df = pd.DataFrame({'a': [1, 2, 3], 'b': [0.5, 1.5, 2.5]})\ndf.describe()");
    assert.equal(frame.isError, false, textOf(frame));
    const text = textOf(frame);
    assert.match(text, /count\s+3\.0+\s+3\.0+/, text);
    assert.match(text, /mean\s+2\.0+\s+1\.5+/, text);
    assert.doesNotMatch(text, /no output|<table|<\/?t[dhr]>/, text);
    assert.deepEqual(others(frame), [], 'the table is in the text only, once');
    assert.match(frame.structuredContent.result, /^\s+a\s+b\ncount/);
    const rich = await exec('rich', 'from IPython.display import HTML, Markdown, Latex, display\n'
      + "display(HTML('<h3>Sales</h3><table><tr><th>region</th><th>total</th></tr>"
      + "<tr><td>north</td><td>1 &amp; 2</td></tr></table><script>alert(1)</script>'))\n"
      + "display(Markdown('# Title\\n*stress*'))\n"
      + "Latex(r'$\\frac{a}{b}$')");
    const t = textOf(rich);
    assert.equal(rich.isError, false, t);
    assert.match(t, /Sales\n+region \| total\nnorth \| 1 & 2/, t);
    assert.match(t, /# Title\n\*stress\*/, t);
    assert.match(t, /\$\\frac\{a\}\{b\}\$/, t);
    assert.doesNotMatch(t, /IPython\.core\.display|alert|no output/, t);
    assert.deepEqual(others(rich), []);
    /* structuredContent keeps its shape: one entry a display */
    assert.equal(rich.structuredContent.displays.length, 3,
      JSON.stringify(rich.structuredContent.displays));
  });

  test('a plot is an image with its text; a chart with no text form is named', T, async () => {
    const plot = await exec('plot', "import matplotlib\nmatplotlib.use('Agg')\n"
      + 'import matplotlib.pyplot as plt\nplt.plot([1, 2, 3])\nplt.show()');
    assert.equal(plot.isError, false, textOf(plot));
    assert.deepEqual(others(plot), ['image']);
    assert.equal(textOf(plot), '[1 image, shown below]', 'never "(no output)" for a plot');
    const chart = await exec('plot', "display({'application/vnd.plotly.v1+json': {'data': []}, "
      + "'text/html': '<div id=\"p\"></div><script>Plotly.newPlot(\"p\")</script>'}, raw=True)");
    assert.match(textOf(chart), /no text form: .*application\/vnd\.plotly\.v1\+json/,
      textOf(chart));
    const nothing = await exec('plot', 'x = 1');
    assert.equal(textOf(nothing), '(no output)', 'only when the kernel sent nothing');
  });

  test('other kernels: R, Octave, JavaScript, xeus-python', T, async () => {
    /* every kernel here is installed by make test-deps: none may be missing */
    const specs = execFileSync(CODEBOX_BIN, ['kernelspecs'], { env: codeboxEnv() }).toString();
    for (const name of ['ir', 'octave', 'javascript', 'xpython'])
      assert.match(specs, new RegExp(`^${name}\\t`, 'm'), specs);
    const cases = [
      ['ir', 'x <- c(1, 2, 3)\nlength(x)', /^\[1\] 3\n?$/],
      ['ir', "data.frame(a = 1:2, b = c('x', 'y'))", /a b\n1 1 x\n2 2 y/],
      ['octave', 'x = [1 2 3]', /x =\s+1\s+2\s+3/],
      ['javascript', '[1, 2].map((v) => v * 21)', /\[ 21, 42 \]/],
      ['xpython', '6 * 7', /^42\n?$/],
    ];
    for (const [kernel, code, want] of cases) {
      const r = await exec(`k-${kernel}`, code, { kernel });
      assert.equal(r.isError, false, `${kernel}: ${textOf(r)}`);
      assert.match(textOf(r), want, `${kernel}: ${JSON.stringify(r.content)}`);
    }
    const failed = await exec('k-ir', "stop('boom')", { kernel: 'ir' });
    assert.equal(failed.isError, true, textOf(failed));
    assert.match(textOf(failed), /boom/);
    const thrown = await exec('k-javascript', "throw new Error('js boom')", { kernel: 'javascript' });
    assert.equal(thrown.isError, true, textOf(thrown));
    assert.match(textOf(thrown), /js boom/);
  });

  test('isError whenever the code did not complete, with the output so far', T, async () => {
    const raised = await exec('errs', "print('before')\n1/0");
    assert.equal(raised.isError, true);
    assert.match(textOf(raised), /before\n[\s\S]*ZeroDivisionError: division by zero/);
    assert.equal(raised.structuredContent.error.ename, 'ZeroDivisionError');
    const slow = await exec('errs', "import time\nprint('started', flush=True)\ntime.sleep(60)",
      { timeout: 2 });
    assert.equal(slow.isError, true, textOf(slow));
    assert.match(textOf(slow), /started[\s\S]*timed out/, textOf(slow));
    const died = await exec('errs', "import os\nprint('last words', flush=True)\nos._exit(3)");
    assert.equal(died.isError, true, textOf(died));
    assert.match(textOf(died), /kernel died/, textOf(died));
    const fine = await exec('errs', "print('again')");
    assert.equal(fine.isError, false, textOf(fine));
    const once = await callTool(client, 'run_python_code', { code: 'raise ValueError("no")' });
    assert.equal(once.isError, true, textOf(once));
    assert.match(textOf(once), /ValueError: no/);
    const js = await callTool(client, 'run_javascript_code', { code: 'null.x' });
    assert.equal(js.isError, true, textOf(js));
    assert.match(textOf(js), /TypeError/);
  });

  test('a 3 MB print gives the model its head and tail, and links the whole', T, async () => {
    const big = await exec('big', "print('y' * 3_000_000)");
    const text = textOf(big);
    assert.equal(big.isError, false);
    assert.ok(Buffer.byteLength(text) <= MODEL_TEXT_BYTES, `${Buffer.byteLength(text)} bytes`);
    assert.match(text, /^y{1000}/);
    assert.match(text, /\[\.\.\. \d+ of \d+ bytes left out here; the whole output is saved as /);
    const link = big.content.find((c) => c.type === 'resource_link');
    assert.ok(link, JSON.stringify(others(big)));
    /* the whole of a smaller output, read back both ways */
    const code = "print('HEAD' + 'x' * 200_000 + 'TAIL')\nprint('last line')";
    const r = await exec('big', code);
    const t = textOf(r);
    assert.ok(Buffer.byteLength(t) <= MODEL_TEXT_BYTES);
    assert.match(t, /^HEADx+\n?\[\.\.\. /, t.slice(0, 200));
    assert.match(t, /x+TAIL\nlast line\n$/, t.slice(-200));
    const path = /saved as (\S+) \(read_file/.exec(t)[1];
    assert.match(path, /^\/session\/\.codebox\/outputs\/.+\.txt$|\.codebox\/outputs\/.+\.txt$/);
    const whole = `HEAD${'x'.repeat(200000)}TAIL\nlast line\n`;
    /* read_file gives it in pieces within the model's budget, each saying where to go on */
    let got = '';
    let offset = 0;
    for (let pieces = 0; ; pieces++) {
      assert.ok(pieces < 10, 'pieces end');
      const file = await callTool(client, 'read_file', { session_id: 'big', path, offset });
      assert.equal(file.isError, false, textOf(file));
      const piece = textOf(file);
      assert.ok(Buffer.byteLength(piece) <= MODEL_TEXT_BYTES + 300, `${Buffer.byteLength(piece)}`);
      const next = file.structuredContent.next_offset;
      const marker = /\n\[(?:\.\.\. )?bytes (\d+)-(\d+) of (\d+)[^\]]*\]\n$/.exec(piece);
      assert.ok(marker, piece.slice(-300));
      assert.equal(Number(marker[1]), offset);
      got += piece.slice(0, marker.index);
      if (next === undefined) {
        assert.match(piece, /the end of the file/);
        break;
      }
      assert.match(piece, new RegExp(`read on with read_file path=\\S+ offset=${next}`));
      offset = next;
    }
    assert.equal(got, whole);
    const small = await callTool(client, 'read_file', { session_id: 'big', path, offset: 4, length: 6 });
    assert.match(textOf(small), /^xxxxxx\n\[\.\.\. bytes 4-10 of \d+ shown/);
    const bad = await callTool(client, 'read_file', { session_id: 'big', path, offset: -1 });
    assert.equal(bad.isError, true);
    const uri = r.content.find((c) => c.type === 'resource_link').uri;
    const read = await client.readResource({ uri });
    assert.equal(read.contents[0].text, whole);
    /* the saved output is not an artifact of the session */
    const arts = await callTool(client, 'list_artifacts', { session_id: 'big' });
    assert.doesNotMatch(textOf(arts), /\.codebox/);
    /* a one-shot run keeps no files, and says so */
    const once = await callTool(client, 'run_python_code', { code: "print('z' * 100_000)" });
    assert.ok(Buffer.byteLength(textOf(once)) <= MODEL_TEXT_BYTES);
    assert.match(textOf(once), /one-shot run keeps no files/);
  });
});

for (const kind of ['stdio', 'sse']) {
  describe(`isError and the text over ${kind}`, () => {
    let server = null;
    let conn;
    before(async () => {
      if (kind === 'sse') server = await startServer();
      conn = await connect(kind, { server });
    });
    after(async () => {
      if (conn) await conn.close().catch(() => {});
      if (server) await server.stop();
    });
    test('an exception is an error; HTML is text; a long print is cut', T, async () => {
      const call = (code) => callTool(conn.client, 'exec_code', { session_id: 's', code },
        { timeout: 110000 });
      const raised = await call('1/0');
      assert.equal(raised.isError, true);
      assert.match(textOf(raised), /ZeroDivisionError/);
      const html = await call("from IPython.display import HTML\nHTML('<p>para <i>one</i></p>')");
      assert.equal(html.isError, false);
      assert.equal(textOf(html), 'para one\n');
      const long = await call("print('w' * 100_000)");
      assert.ok(Buffer.byteLength(textOf(long)) <= MODEL_TEXT_BYTES);
      const link = long.content.find((c) => c.type === 'resource_link');
      const read = await conn.client.readResource({ uri: link.uri });
      assert.equal(read.contents[0].text, `${'w'.repeat(100000)}\n`);
    });
  });
}
