#!/usr/bin/env python3
"""Well-formedness check of lib/report's output, by parsers rocelab does not share.

tests/report_sample writes report.html (every chart kind, 200k-point series, NaN gaps, empty
charts, text full of <>&"' and invalid UTF-8) and standalone SVGs. Here they must parse as XML
(xml.etree, expat) and as HTML (html.parser, tags balanced), hostile text must come back
exactly, nothing may point outside the file, paths stay small, and a second run gives the
same bytes. Where node is installed, the inline hover script must parse as JavaScript.

Usage: diff_report_xml.py PATH/TO/report_sample      (exit 0 all good, 1 a check failed)
"""
import html.parser
import os
import re
import shutil
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET

SVG = "{http://www.w3.org/2000/svg}"
XHTML = "{http://www.w3.org/1999/xhtml}"
HOSTILE = "<b>&amp; \"quoted\" 'single' </b> ]]> \ufffd \ufffd"
VOID = {"meta", "link", "br", "hr", "img", "input", "area", "base", "col", "embed", "source",
        "track", "wbr"}
MAX_PATH_POINTS = 4 * 720 + 16      # one series: at most 4 points per pixel column

failures = []


def check(ok, what):
    if not ok:
        failures.append(what)


class Balance(html.parser.HTMLParser):
    """An HTML5 tokenizer's view: every element closed in order, nothing left open."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.stack = []
        self.tags = set()
        self.errors = []

    def handle_starttag(self, tag, attrs):
        self.tags.add(tag)
        if tag not in VOID:
            self.stack.append(tag)

    def handle_startendtag(self, tag, attrs):
        self.tags.add(tag)

    def handle_endtag(self, tag):
        if not self.stack or self.stack[-1] != tag:
            self.errors.append("</%s> closes <%s>" % (tag, self.stack[-1] if self.stack else ""))
            return
        self.stack.pop()


def text(el):
    return "".join(el.itertext())


def check_svg(root, name):
    check(root.tag == SVG + "svg", "%s: root is %s" % (name, root.tag))
    check(re.fullmatch(r"0 0 \d+ \d+", root.get("viewBox", "")) is not None,
          "%s: viewBox %r" % (name, root.get("viewBox")))
    check(root.find(SVG + "title") is not None, "%s: no <title>" % name)
    for path in root.iter(SVG + "path"):
        d = path.get("d", "")
        points = len(re.findall(r"[MLHV]", d))
        check(points <= 2 * MAX_PATH_POINTS, "%s: a path with %d commands" % (name, points))
        check(re.fullmatch(r"[-0-9.,MLHV]*", d) is not None, "%s: odd path data %.40r" % (name, d))
    for el in root.iter():
        for attr, value in el.attrib.items():
            check(not re.search(r"(?i)(https?:|file:|//)", value) or attr == "xmlns",
                  "%s: external reference %s=%r" % (name, attr, value))


def main():
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory() as tmp:
        outs = []
        for run in ("a", "b"):
            d = os.path.join(tmp, run)
            os.mkdir(d)
            subprocess.run([sys.argv[1], d], check=True)
            outs.append({n: open(os.path.join(d, n), "rb").read() for n in sorted(os.listdir(d))})
    files = outs[0]
    check(sorted(files) == ["bar.svg", "empty.svg", "line.svg", "report.html"],
          "files: %s" % sorted(files))
    for n in files:
        check(files[n] == outs[1].get(n), "%s differs between two runs" % n)

    # standalone SVGs: XML with a declaration, an svg root
    for n in ("bar.svg", "empty.svg", "line.svg"):
        try:
            root = ET.fromstring(files[n])
        except ET.ParseError as e:
            check(False, "%s: not well-formed XML: %s" % (n, e))
            continue
        check_svg(root, n)
    check(b">no data<" in files["empty.svg"], "empty.svg: no 'no data' note")
    check(len(files["line.svg"]) < 150000, "line.svg: %d bytes for 2 x 200k points"
          % len(files["line.svg"]))

    page = files["report.html"]
    check(len(page) < 600000, "report.html: %d bytes" % len(page))
    check(page.startswith(b"<!DOCTYPE html>\n"), "report.html: no doctype")
    # as HTML
    p = Balance()
    p.feed(page.decode("utf-8"))
    p.close()
    check(not p.errors, "html.parser: %s" % p.errors[:3])
    check(not p.stack, "html.parser: left open: %s" % p.stack)
    for tag in ("link", "img", "iframe", "object", "embed"):
        check(tag not in p.tags, "report.html: has <%s>" % tag)
    # as XML (the page is polyglot XHTML)
    try:
        root = ET.fromstring(page)
    except ET.ParseError as e:
        check(False, "report.html: not well-formed XML: %s" % e)
        root = None
    if root is not None:
        title = root.find("%shead/%stitle" % (XHTML, XHTML))
        check(title is not None and title.text == "rocelab sample report " + HOSTILE,
              "title came back as %r" % (title.text if title is not None else None))
        h1 = root.find(".//%sh1" % XHTML)
        check(h1 is not None and text(h1) == "rocelab sample report " + HOSTILE, "h1 text")
        caption = root.find(".//%scaption" % XHTML)
        check(caption is not None and text(caption) == "Goodput per case " + HOSTILE,
              "caption came back as %r" % (text(caption) if caption is not None else None))
        rows = root.findall(".//%stbody/%str" % (XHTML, XHTML))
        check(len(rows) == 2 and all(len(r) == 4 for r in rows), "table: %d rows" % len(rows))
        check(rows and text(rows[1][0]) == "lossy " + HOSTILE, "cell text")
        svgs = list(root.iter(SVG + "svg"))
        check(len(svgs) == 7, "report.html: %d charts, want 7" % len(svgs))
        for i, s in enumerate(svgs):
            check_svg(s, "report.html chart %d" % (i + 1))
        ids = [el.get("id") for el in root.iter() if el.get("id") is not None]
        check(len(ids) == len(set(ids)), "report.html: duplicate ids")
        nodata = [t for t in root.iter(SVG + "text") if t.text == "no data"]
        check(len(nodata) == 2, "report.html: %d 'no data' notes, want 2" % len(nodata))
        legend = [text(t) for t in root.iter(SVG + "text")]
        check("flow 2 " + HOSTILE in legend, "legend text with <>&\"' did not come back")
        scripts = list(root.iter(XHTML + "script"))
        check(len(scripts) == 1 and not scripts[0].get("src"), "one inline script, no src")
        code = text(scripts[0]).replace('"http://www.w3.org/2000/svg"', "")  # a namespace name
        check(not re.search(r"(fetch|XMLHttpRequest|import|https?:|\.src\b)", code),
              "the script reaches outside the page")
        node = shutil.which("node")
        if node and scripts:        # the hover script at least parses as JavaScript
            with tempfile.NamedTemporaryFile("w", suffix=".js", delete=False) as js:
                js.write(text(scripts[0]))
            r = subprocess.run([node, "--check", js.name], capture_output=True, text=True)
            os.unlink(js.name)
            check(r.returncode == 0, "node --check: %s" % r.stderr.strip()[-300:])
        style = "".join(text(s) for s in root.iter(XHTML + "style"))
        check("url(" not in style and "@import" not in style, "CSS loads something")
        rows_div = [d for d in root.iter(XHTML + "div") if d.get("class") == "row"]
        check(len(rows_div) == 3 and [len(d) for d in rows_div] == [2, 2, 2],
              "rows: %s" % [len(d) for d in rows_div])
    if failures:
        for f in failures:
            print("FAIL:", f)
        return 1
    print("diff_report_xml: report.html and 3 SVGs parse as XML and HTML, deterministic, self-contained")
    return 0


if __name__ == "__main__":
    sys.exit(main())
