"""What the goal's words ask for: whether it must keep behaviour, which names it asks for, which it rules out.

Parts: `negated()` (the spans under "do not", "without", "instead of", ...),
`preserving()` (a refactor that asks for no new behaviour: PASS_TO_PASS is
enough proof), `not_a_file()` (domains, URLs and technology names that look
like file names) and `named_identifiers()` (files and code names the goal
names, for tying a flipped test to the goal). Pure functions of the text.
"""

from __future__ import annotations

import re

__all__ = ["asks_for_tests", "named_identifiers", "negated", "not_a_file", "preserving", "strip_urls"]

_NEGATION = re.compile(
    r"\b(do(es)?\s*n[o']t|don'?t|doesn'?t|must\s*n[o']t|mustn'?t|should\s*n[o']t|shouldn'?t|shall\s+not|"
    r"need\s*n[o']t|needn'?t|never|without|avoid\w*|instead\s+of|rather\s+than|no|not|nor|neither|"
    r"leave\s+\S+\s+(alone|untouched|as\s+it\s+is))\b",
    re.IGNORECASE,
)
_SCOPE_END = re.compile(r"[.;:!?,](\s|$)|\s(but|and|then|instead|yet|so|while)\b|\(|\)", re.IGNORECASE)


def negated(goal: str) -> list[tuple[int, int]]:
    """The spans of `goal` a negation rules out: from the negating word to the end of its clause."""
    spans = []
    for m in _NEGATION.finditer(goal):
        end = _SCOPE_END.search(goal, m.end())
        spans.append((m.start(), end.start() if end else len(goal)))
    return spans


def _inside(at: int, spans: list[tuple[int, int]]) -> bool:
    return any(a <= at < b for a, b in spans)


_REFACTOR = re.compile(
    r"\b(refactor\w*|restructur\w*|re-?organi[sz]\w*|renam\w*|mov(e|es|ed|ing)|extract\w*|inlin(e|es|ed|ing)|"
    r"simplif\w*|clean(s|ed|ing)?[ -]?up|tid(y|ies|ied|ying)|moderni[sz]\w*|reformat\w*|re-?indent\w*|"
    r"split\w*|merg(e|es|ed|ing)|dedup\w*|de-?duplicat\w*|consolidat\w*|decompos\w*|modulari[sz]\w*|"
    r"lint\w*|pretty[- ]print\w*|add(ing)? (type )?(hints|annotations|docstrings|comments)|"
    r"type[- ]annotat\w*|behaviou?r[- ]preserving|no[n-]?functional change|no behaviou?r(al)? change|"
    r"(without|no) chang\w*( (in|to))?( (the|its|any))? (behaviou?r|functionality|output)|"
    r"keep\w* (the |its |existing |all )?(behaviou?r|functionality|output)( the same| unchanged| intact)?|"
    r"same (behaviou?r|output))\b",
    re.IGNORECASE,
)
_FEATURE = re.compile(
    r"\b(add(s|ed|ing)?|implement\w*|support\w*|creat(e|es|ed|ing)|fix(es|ed|ing)?|handl(e|es|ed|ing)|"
    r"print\w*|output\w*|return\w*|accept\w*|allow\w*|enabl\w*|introduc\w*|generat\w*|build\w*|writ(e|es|ing)|"
    r"emit\w*|rais(e|es|ed|ing)|validat\w*|report\w*|respond\w*|display\w*|show\w*|log(s|ged|ging)?|"
    r"new (option|flag|argument|parameter|feature|command|subcommand|endpoint|behaviou?r|mode|setting)|"
    r"make (?:it|them|this|that|\w+(?:\.\w+)?) (?P<what>\w+)|"
    r"chang\w* (the |its )?(behaviou?r|output|default|result|message|format|exit code|error))",
    re.IGNORECASE,
)
_MAKE_KEEPS = re.compile(
    r"(?i)(clean|simpl|short|read|clear|tid|neat|easi|nice|small|more|less|consistent|idiomatic|faster|modular)"
)
_RENAME_TO = re.compile(r"(?i)\b(renam\w*|mov\w*)\s+(?:the\s+)?(?:\w+\s+)?`?[\w.:/-]+`?\s+(to|as|into)\s+`?[\w.:/-]+`?")
_STILL = re.compile(r"(?i)\b(still|continues? to|keeps?|keep on|as before|must|should)\s*$")
_NOUN_BEFORE = re.compile(r"(?i)\b(the|a|an|its|their|this|that|def|function|method)\s*$")
_NOUN_AFTER = re.compile(r"(?i)^\s*(\(|`|'|\"|function|method|helper|variable|module|class|statement|call)")


def _is_ask(goal: str, m: re.Match[str]) -> bool:
    """Whether a feature word is an ask: not a name (`add()`, "the add function"), not "still prints"."""
    before, after = goal[:m.start()], goal[m.end():]
    if before.endswith(("`", "'", '"', ".", "_")) or after.startswith(("`", "_", "(", ".")):
        return False
    if _NOUN_BEFORE.search(before) or _NOUN_AFTER.match(after) or _STILL.search(before):
        return False
    word = m.group(0).lower()
    return not (word.startswith("make ") and _MAKE_KEEPS.match(m.group("what") or ""))


def preserving(goal: str) -> bool:
    """Whether the goal asks for a change that must keep behaviour (a refactor, a rename, a split, type hints)
    and for no new behaviour: then the old checks passing before and after is the proof. A refactor word under a
    negation ("do not restructure") is no refactor ask; a feature ask ("and add mul", "make it print ...")
    outside a negation makes the goal ask for new behaviour."""
    text = strip_urls(goal)
    spans = negated(text)
    no_phrase = re.compile(r"(?i)\b(without|no) chang|\bno[n-]?functional|\bno behaviou?r")
    refactor = [m for m in _REFACTOR.finditer(text)
                if not _inside(m.start(), spans) or no_phrase.match(text, m.start())]
    if not refactor:
        return False
    if any(not _inside(m.start(), spans) for p in (_DEMAND, _INTERFACE) for m in p.finditer(text)):
        return False  # "so that s() sorts descending", "must be upper case", "rename the --loud flag": new behaviour
    blank = _RENAME_TO.sub(lambda m: " " * len(m.group(0)), text)
    for m in _REFACTOR.finditer(blank):  # "add type hints" is no feature ask
        blank = _blank(blank, m.start(), m.end())
    return not _new_behaviour(blank, spans)


_KEEPS = (r"(?:use[sd]?\b|using|call\w*|import\w*|delegat\w*|rel(?:y|ies)|depend\w*|reuse\w*|liv\w*|go\b|"
          r"be (?:split|moved|typed|annotated|renamed|extracted|inlined|in|inside|under|private|public|a |an |one )|"
          r"still|also|keep\w*|continu\w*|remain\w*|stay\w*|pass\w*|work\w*|behav\w*|not\b|n't|never|"
          r"be (?:the same|unchanged|identical|preserved|kept|intact|equivalent|compatible|backwards?)|"
          r"(?:produce|print|return|give|output)s? (?:the same|identical)|"
          r"(?:(?:it|they|the code|\w+(?:\.\w+)?)\s+)?(?:is|are|reads?|becomes?|gets?|looks?)\s+(?:a bit\s+|much\s+)?"
          r"(?:easier|cleaner|simpler|clearer|shorter|more|less|faster|smaller|readable|nicer|tidier|neater|better))")
_DEMAND = re.compile(
    r"(?i)\b(?:so that|so it|so they|such that|in order that|(?:it|they|\w+\(\)|output|result) (?:should|must|shall)|"
    r"should|must|has to|have to|needs? to|shall)\s+(?!" + _KEEPS + r")\w+"
    r"|\b(?:as|to|into) (?:json|yaml|csv|tsv|xml|html|toml|markdown|a table)\b"
    r"|\b(?:descending|ascending|upper[- ]?case|lower[- ]?case|sorted|reversed)\b"
)
"""A demand on what the code does ("so that s() sorts", "the output must be upper case", "as JSON"): a goal that also
says "simplify" or "clean up" then asks for new behaviour, and keeping the old behaviour is no proof."""
_INTERFACE = re.compile(
    r"(?i)\b(?:renam\w*|mov\w*|reformat\w*|chang\w*)\s+(?:the\s+|its\s+|a\s+)?(?:`?--?[\w-]+`?\s+)?"
    r"(?:flag|option|command|subcommand|endpoint|route|env(?:ironment)? variable|output|message|format|exit code|"
    r"api|env(?:ironment)? var|setting|config(?:uration)? key|cli (?:flag|option|argument))\b"
    r"|\b(?:renam\w*|mov\w*)\s+(?:the\s+)?`?--[\w-]+"
)
"""A rename or reformat of what users or callers see (a CLI flag, an endpoint, the output format): new behaviour."""


def _blank(text: str, a: int, b: int) -> str:
    return text[:a] + " " * (b - a) + text[b:]


_NOUN_FORM = re.compile(r"(?i)(ion|ions|ers?)$")
"""A feature word spelled as a noun ("the duplicated type validation", "the handler") names a thing, asks nothing."""


def _new_behaviour(text: str, spans: list[tuple[int, int]]) -> bool:
    return any(_is_ask(text, m) and not _inside(m.start(), spans) and not _noun(text, m)
               for m in _FEATURE.finditer(text))


def _noun(text: str, m: re.Match[str]) -> bool:
    """One word that is a noun form, or the start of a longer word ("handle" in "handler")."""
    whole = m.group(0) + re.match(r"\w*", text[m.end():]).group(0)  # type: ignore[union-attr]
    return " " not in whole and _NOUN_FORM.search(whole) is not None


_TESTS_ASK = re.compile(
    r"(?i)\b(writ(e|es|ing)|add(s|ing)?|creat(e|es|ing)|extend\w*|improv\w*|increas\w*|expand\w*|cover\w*)\s+"
    r"(\w+\s+){0,3}?(unit |integration |regression |end-to-end |e2e |pytest |unittest |bats |shell )?"
    r"(tests?|test cases?|test suite|specs?|coverage)\b"
)
_TESTS_WITH = re.compile(
    r"(?i)\b(?:with|including|plus|alongside|along with)\s+(?:\w+\s+){0,2}?(?:unit |integration |regression |new )?"
    r"(?:tests?|test cases?)\b|\b(?:tests?|test cases?)\s+(?:go|goes|belong|belongs|live|lives)\s+(?:in|into)\b"
    r"|\bcover(?:s|ed|ing)?\s+(?:it|them|this|that|\w+)\s+(?:with|by)\s+(?:a\s+|new\s+)?tests?\b")
"""A test asked for in passing ("..., with a unit test for it in test_calc.py", "tests go in test_calc.py")."""
_TESTS_END = re.compile(
    r"[.;:!?](\s|$)|\s(and|then|but|also)\s+(fix|implement|make|change|update|support|handle|refactor|rename|"
    r"create|write|add\s+(a|an|the|new|support)|remove|delete)\b", re.IGNORECASE)


def asks_to_add_tests(goal: str) -> bool:
    """Whether the goal asks, among other things, for tests to be written or added ("... and add a unit test for
    sub to test_calc.py", "..., with a unit test for it in test_calc.py", "tests go in test_calc.py"): an edit that
    only adds tests to the test file it names is then the change. "test_calc.py must pass" asks for none."""
    text = strip_urls(goal)
    spans = negated(text)
    return any(not _inside(m.start(), spans) for m in (*_TESTS_ASK.finditer(text), *_TESTS_WITH.finditer(text)))


def asks_for_tests(goal: str) -> bool:
    """Whether the goal's whole deliverable is tests ("Write unit tests for add and mul in test_calc.py"): then
    the person's check that runs them, passing, is the proof (before the run they did not exist)."""
    text = strip_urls(goal)
    spans = negated(text)
    asks = [m for m in _TESTS_ASK.finditer(text) if not _inside(m.start(), spans)]
    if not asks:
        return False
    for m in asks:
        end = _TESTS_END.search(text, m.end())
        text = _blank(text, m.start(), end.start() if end else len(text))
    return not _new_behaviour(text, spans)


_URL = re.compile(r"(?i)\b([a-z][a-z0-9+.-]*://\S+|www\.\S+|[\w.+-]+@[\w-]+(\.[\w-]+)+)")


def strip_urls(goal: str) -> str:
    """The goal with URLs, `www.` hosts and e-mail addresses blanked (same length, so offsets hold)."""
    return _URL.sub(lambda m: " " * len(m.group(0)), goal)


_TLD_ALWAYS = {"com", "net", "edu", "gov", "mil", "int"}
_TLD_HOSTS = {"org", "io", "dev", "app", "ai", "co", "uk", "de", "fr", "info", "biz", "me", "us", "eu", "tech",
              "site", "cloud", "xyz", "ca", "au", "jp", "in", "nl", "ch", "se", "ru", "cn", "br"}
_HOST_STEMS = {"example", "localhost", "github", "gitlab", "google", "python", "pypi", "npmjs", "wikipedia",
               "mozilla", "stackoverflow", "test", "invalid"}
_SUBDOMAINS = {"www", "docs", "api", "en", "blog", "mail", "static", "cdn", "app", "dev", "developer", "developers"}
_TECH = re.compile(
    r"(?i)^(node|vue|next|nuxt|react|express|three|d3|chart|angular|ember|backbone|socket|moment|p5|alpine|"
    r"solid|anime|ml5|paper|pixi|phaser|tensorflow|brain|leaflet|knockout|meteor|nest|gatsby|deno|bun|"
    r"preact|mithril|riot|polymer|handlebars|mustache|underscore|lodash|require|sails|koa|hapi|fastify|"
    r"electron|ionic|cypress|jest|mocha|chai|sinon|webpack|rollup|babel|immutable|rx|redux|zod|day|luxon|"
    r"plotly|highcharts|cytoscape|sigma|vis|raphael|fabric|konva|matter|cannon|babylon|aframe|a-frame|"
    r"popper|swiper|hammer|howler|tone|pdf|tesseract|brython|skulpt)\.js$"
    r"|^(asp|vb|ado)?\.net$|^(asp|vb|ado)\.net(\.\w+)?$|^socket\.io$|^\.net$|^f#?\.net$"
)


def not_a_file(name: str) -> bool:
    """Whether a file-like name in the goal is a domain (`example.org`, `docs.python.org`) or a technology
    (`Node.js`, `ASP.NET`, `Socket.IO`), not a file the run must leave."""
    if _TECH.match(name):
        return True
    parts = name.lower().split(".")
    if "/" in name or len(parts) < 2:
        return False
    tld = parts[-1]
    if tld in _TLD_ALWAYS:
        return True
    hosty = bool(_HOST_STEMS.intersection(parts[:-1])) or len(parts) >= 3 and (
        parts[0] in _SUBDOMAINS or parts[-2] in _TLD_HOSTS | {"com"})
    return tld in _TLD_HOSTS and hosty


_BACKTICK = re.compile(r"`([^`\n]{1,80})`")
_CALL = re.compile(r"\b([A-Za-z_]\w*)\s*\(")
_OPTION = re.compile(r"(?<![\w-])(--?[A-Za-z][\w-]*)")
_FILE_WORD = re.compile(r"[\w./-]+\.(?:txt|md|rst|py|sh|bash|bats|js|mjs|cjs|ts|tsx|jsx|json|ya?ml|toml|cfg|ini|"
                        r"csv|tsv|html?|css|c|h|cc|cpp|go|rs|rb|java|kt|php|log|lock|xml|sql|in|example|gz|tar|zip)\b")
_CODE_NAME = re.compile(r"\b([a-z]+_[a-z0-9_]+|[a-z]+[A-Z]\w*|[A-Z][a-z0-9]+[A-Z]\w*)\b")
_NAME_WORDS = re.compile(r"(?i)\b(?:function|method|class|command|option|flag|variable|field|attribute|endpoint|"
                         r"subcommand|module)\s+`?([A-Za-z_][\w-]*)")


_STOP = {"to", "that", "which", "the", "an", "and", "or", "for", "in", "on", "of", "with", "so", "it", "is", "as",
         "called", "named", "should", "must", "from", "into", "this", "its"}


def named_identifiers(goal: str, files: list[str]) -> list[str]:
    """The code names the goal asks about: names in backticks, `name(`, `--option`, snake_case or camelCase
    words, "function mul", plus each named file and its stem (`upper.sh` -> `upper`). Empty when it names none."""
    text = strip_urls(goal)
    names: set[str] = set()
    for m in _BACKTICK.finditer(text):
        names.update(re.findall(r"[A-Za-z_][\w-]*", m.group(1)))
    text = _FILE_WORD.sub(" ", text)  # `old_notes.txt` names a file (added below), not the code `old_notes`
    for pattern in (_CALL, _OPTION, _CODE_NAME, _NAME_WORDS):
        names.update(m.group(1) for m in pattern.finditer(text))
    for f in files:
        base = f.rsplit("/", 1)[-1]
        names.update({f, base, base.split(".", 1)[0]})
    return sorted(n for n in names if len(n.strip("-")) >= 2 and n.lower() not in _STOP)
