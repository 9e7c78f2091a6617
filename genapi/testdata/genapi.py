"""The generic API's reference for templates: what the manifest's templates
mean is decided here by Jinja2 set up as Airbyte's declarative CDK sets it up
(lang/interp/testdata/cdk_jinja.py), never by the runtime under test.

Reads on stdin {"now", "config", "renders": [{"template", "parameters"}],
"cursors": [{...}]} and writes {"renders": [...], "cursors": [...]}:

- a render is the template's text with config and parameters, or null when
  it does not render (it reads a variable only known at request time);
- a cursor search finds, for a CursorPagination strategy, what a page must
  hold so that the paginator asks for the next page (a marker token where the
  cursor value reads it) or stops (the stop condition holds or the cursor is
  empty), trying candidate values at every key chain the templates read from
  response, headers and last_record.
"""

import copy
import itertools
import json
import os
import re
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "lang", "interp", "testdata"))
import datetime  # noqa: E402

import cdk_jinja  # noqa: E402

UNSET = object()   # the chain is absent
PARENT = object()  # only its parents are present, as empty objects
ROOTS = ("response", "headers", "last_record")
MAX_CHAINS = 4

SUBSCRIPT = re.compile(r"\s*\[\s*(?:'([^']*)'|\"([^\"]*)\"|(-?\d+))\s*\]")
GET_CALL = re.compile(r"\s*\.\s*get\s*\(\s*(?:'([^']*)'|\"([^\"]*)\")")
ATTRIBUTE = re.compile(r"\s*\.\s*([A-Za-z_][A-Za-z0-9_]*)(?!\s*\()")
QUOTED = re.compile(r"'([^']*)'|\"([^\"]*)\"")


def close_paren(s, i):
    depth, quote = 1, None
    while i < len(s):
        c = s[i]
        if quote:
            if c == quote:
                quote = None
        elif c in "'\"":
            quote = c
        elif c in "([{":
            depth += 1
        elif c in ")]}":
            depth -= 1
            if depth == 0:
                return i + 1
        i += 1
    return i


def accesses(template, root):
    """Key chains the template reads from root: response['a'].b.get('c')
    gives ["a", "b", "c"]; an integer index is kept as an int."""
    out = []
    for m in re.finditer(r"(?<![\w.])" + root + r"(?!\w)", template):
        i, chain = m.end(), []
        while True:
            rest = template[i:]
            g = GET_CALL.match(rest)
            if g:
                chain.append(g.group(1) if g.group(1) is not None else g.group(2))
                i += close_paren(rest, g.end())
                continue
            s = SUBSCRIPT.match(rest)
            if s:
                chain.append(int(s.group(3)) if s.group(3) is not None else (s.group(1) if s.group(1) is not None else s.group(2)))
                i += s.end()
                continue
            a = ATTRIBUTE.match(rest)
            if a and a.group(1) not in ("get", "items", "keys", "values"):
                chain.append(a.group(1))
                i += a.end()
                continue
            break
        if chain and chain not in out:
            out.append(chain)
    return out


def place(tree, keys, value):
    """Writes value at keys in tree, making dicts on the way; UNSET writes
    nothing, PARENT only the parents. False when the place cannot hold it."""
    if value is UNSET:
        return True
    cur = tree
    for k in keys[:-1]:
        if isinstance(k, int):
            if not isinstance(cur, list) or not cur or k >= len(cur) or k < -len(cur):
                return False
            cur = cur[k]
            continue
        if not isinstance(cur, dict):
            return False
        if not isinstance(cur.get(k), (dict, list)):
            cur[k] = {}
        cur = cur[k]
    last = keys[-1]
    if value is PARENT:
        return True
    if isinstance(last, int):
        if not isinstance(cur, list) or not cur or last >= len(cur) or last < -len(cur):
            return False
        cur[last] = copy.deepcopy(value)
        return True
    if not isinstance(cur, dict):
        return False
    cur[last] = copy.deepcopy(value)
    return True


def parse_links(link):
    """headers['link'] as requests parses the Link header the API writes:
    {rel: {"url": ..., "rel": rel, param: value}}."""
    out = {}
    for rel, params in link.items():
        if isinstance(params, dict):
            p = {k: str(v) if not isinstance(v, str) else v for k, v in params.items() if v is not None}
            p.setdefault("url", "http://mock.invalid/next")
            p["rel"] = rel
            out[rel] = p
    return out


def context(case, body, records, placements, count):
    body = copy.deepcopy(body)
    recs = get_records(body, case["records_path"])
    headers = {}
    for chain, value in placements:
        root, keys = chain[0], chain[1:]
        if root == "response":
            if not place(body, keys, value):
                return None
        elif root == "last_record":
            if not recs or not place(recs[-1], keys, value):
                return None
        else:
            if not place(headers, keys, value):
                return None
    link = {}
    for k in list(headers):
        if k.lower() == "link":
            link = headers.pop(k)
    headers = {k: (v if isinstance(v, str) else json.dumps(v)) for k, v in headers.items() if v is not None}
    headers["link"] = parse_links(link) if isinstance(link, dict) else {}
    ctx = {"config": case["config"], "parameters": case["parameters"], "response": body, "headers": headers,
           "last_record": recs[-1] if recs else None, "last_page_size": count}
    return ctx


def get_records(body, path):
    if not path and isinstance(body, dict):
        return [body] if body else []
    cur = body
    for k in path:
        if not isinstance(cur, dict):
            return []
        cur = cur.get(k)
    return cur if isinstance(cur, list) else []


def decide(case, ctx):
    """The CDK's CursorPaginationStrategy.next_page_token: ("stop", None),
    ("next", token) or ("error", text)."""
    try:
        if case.get("stop_condition") and cdk_jinja.mode_bool(case["stop_condition"], json.loads(json.dumps(ctx))):
            return "stop", None
        token = cdk_jinja.mode_eval(case["cursor_value"], json.loads(json.dumps(ctx)))
    except Exception as e:  # noqa: BLE001 - any failure is a page that does not decide
        return "error", type(e).__name__
    if not token:
        return "stop", None
    return "next", token


def search(case):
    src = case["cursor_value"] + " " + (case.get("stop_condition") or "")
    chains = []
    for root in ROOTS:
        for keys in accesses(src, root):
            chains.append([root] + keys)
    chains = chains[:MAX_CHAINS]
    literals = [a if a else b for a, b in QUOTED.findall(case.get("stop_condition") or "")]
    bodies = case["bodies"]  # record count (as text) -> (body, records)
    # The last page: the stop condition holds or the cursor is empty.
    last = None
    candidates = [UNSET, PARENT, None, False, "", 0, {}, [], True] + literals
    for count in case["last_counts"]:
        body = bodies[str(count)]
        for combo in itertools.product(candidates, repeat=len(chains)):
            ctx = context(case, body, None, list(zip(chains, combo)), count)
            if ctx is None:
                continue
            if decide(case, ctx)[0] == "stop":
                last = {"count": count, "placements": encode_placements(chains, combo)}
                break
        if last:
            break
    if last is None:
        return {"ok": False, "why": "no page makes the paginator stop"}
    # The pages before: the cursor reads a marker token, the stop condition does not hold.
    pages = []
    count = case["continue_count"]
    body = bodies[str(count)]
    for k in range(1, case["pages"]):
        found = None
        for token in tokens(case, k):
            choices = [token, UNSET, True, "true", 1, "x"] + literals
            for combo in itertools.product(choices, repeat=len(chains)):
                ctx = context(case, body, None, list(zip(chains, combo)), count)
                if ctx is None:
                    continue
                verdict, value = decide(case, ctx)
                if verdict == "next" and recognizable(value, k):
                    found = {"placements": encode_placements(chains, combo), "token": str(value)}
                    break
            if found:
                break
        if found is None:
            return {"ok": False, "why": "no page makes the paginator read a marker token"}
        pages.append(found)
    return {"ok": True, "last": last, "continue_count": count, "pages": pages}


def tokens(case, k):
    marker = "mockcursor%dz" % k
    if case["inject_path"]:
        return ["{MOCK}{REQPATH}?page_cursor=" + marker, marker, 7700 + k]
    return [marker, 7700 + k]


def recognizable(value, k):
    text = str(value)
    return ("mockcursor%dz" % k) in text or str(7700 + k) in text or str(7700 + k + 1) in text


def encode_placements(chains, combo):
    out = []
    for chain, value in zip(chains, combo):
        if value is UNSET:
            continue
        out.append({"chain": chain, "parent_only": value is PARENT, "value": None if value is PARENT else value})
    return out


def render(item, config):
    ctx = {"config": config, "parameters": item.get("parameters") or {}}
    try:
        out = cdk_jinja.render(cdk_jinja.ENV, item["template"], ctx)
    except Exception:  # noqa: BLE001 - it reads what only a request knows
        return None
    return out


def main():
    data = json.load(sys.stdin)
    cdk_jinja.NOW = datetime.datetime.fromisoformat(data["now"])
    out = {"renders": [render(r, data["config"]) for r in data.get("renders") or []], "cursors": []}
    for case in data.get("cursors") or []:
        case["config"] = data["config"]
        try:
            out["cursors"].append(search(case))
        except Exception as e:  # noqa: BLE001 - reported as the mock's problem
            out["cursors"].append({"ok": False, "why": "%s: %s" % (type(e).__name__, e)})
    json.dump(out, sys.stdout)


if __name__ == "__main__":
    main()
