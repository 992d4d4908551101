"""Hooks of the REST API's schemathesis run (.ci/run): the string formats the OpenAPI document names, and
the TOML body of `POST /apply`.

`quartz-cron` is a Quartz cron expression (six fields: seconds, minutes, hours, day of month, month, day
of week; one of the two day fields is `?`). No pattern states its grammar, so positive tests draw from
well-formed fields here; negative tests still send any other text, which the admin refuses.
"""

import math

import schemathesis
from hypothesis import strategies as st

SECONDS = ["0", "*", "0/15", "5-10", "1,2,3"]
MINUTES = ["0", "*", "*/5", "0-30/10", "59"]
HOURS = ["0", "*", "8-18", "*/2", "23"]
DAYS_OF_MONTH = ["1", "15", "*", "1-10", "L"]
MONTHS = ["*", "1", "JAN-JUN", "*/3", "12"]
DAYS_OF_WEEK = ["*", "MON-FRI", "1", "SUN", "2,4,6"]


@st.composite
def quartz_cron(draw):
    fields = [draw(st.sampled_from(values)) for values in (SECONDS, MINUTES, HOURS)]
    if draw(st.booleans()):
        days = [draw(st.sampled_from(DAYS_OF_MONTH)), draw(st.sampled_from(MONTHS)), "?"]
    else:
        days = ["?", draw(st.sampled_from(MONTHS)), draw(st.sampled_from(DAYS_OF_WEEK))]
    return " ".join(fields + days)


schemathesis.openapi.format("quartz-cron", quartz_cron())


# The fields of a jobs-as-code document whose null means "absent" (`Option` in the admin): TOML has no
# null, so they are left out. Any other null is written as a bare `null`, which TOML does not parse,
# so a document that JSON would refuse for its null is refused in TOML too.
NULL_MEANS_ABSENT = {"key", "trigger_status", "glue_history"}
# The same inside a GLUE history version, whose nullable columns are `Option`s too.
NULL_MEANS_ABSENT_IN_VERSION = {"glue_type", "glue_source", "add_time", "update_time"}
# The same inside a workflow, and inside one of its nodes, whose kind's fields are each an `Option`.
NULL_MEANS_ABSENT_IN_WORKFLOW = {"trigger_status", "deadline"}
NULL_MEANS_ABSENT_IN_NODE = {"job", "param", "workflow", "params", "branch", "default", "approvers"}
# And inside a workflow's schedule, whose `conf` (a cron expression or seconds) is an `Option`.
NULL_MEANS_ABSENT_IN_SCHEDULE = {"conf"}


def toml_string(text):
    escaped = []
    for char in text:
        code = ord(char)
        if char in '"\\':
            escaped.append("\\" + char)
        elif code < 0x20 or code == 0x7F:
            escaped.append("\\u%04x" % code)
        else:
            escaped.append(char)
    return '"' + "".join(escaped) + '"'


def toml_value(value, within=None):
    """`within`: the key the value (or, for a list, its items) is the value of."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        # JSON Schema's integers include 1.0; the admin reads a JSON 1.0 as 1, so the TOML says 1.
        if value.is_integer() and abs(value) < 2**53:
            return str(int(value))
        if math.isnan(value):
            return "nan"
        if math.isinf(value):
            return "inf" if value > 0 else "-inf"
        return repr(value)
    if isinstance(value, str):
        return toml_string(value)
    if isinstance(value, list):
        return "[" + ", ".join(toml_value(item, within) for item in value) + "]"
    if isinstance(value, dict):
        pairs = (f"{toml_string(str(k))} = {toml_value(v, k)}" for k, v in value.items() if not absent(k, v, within))
        return "{" + ", ".join(pairs) + "}"
    return "null"


def absent(key, value, within=None):
    names = {
        "glue_history": NULL_MEANS_ABSENT_IN_VERSION,
        "workflow": NULL_MEANS_ABSENT_IN_WORKFLOW,
        "node": NULL_MEANS_ABSENT_IN_NODE,
        "schedule": NULL_MEANS_ABSENT_IN_SCHEDULE,
    }.get(within, NULL_MEANS_ABSENT)
    return value is None and key in names


@schemathesis.serializer("application/toml", "text/toml")
def toml_document(ctx, value):
    """A document as TOML: the top-level table's keys one per line, every nested value inline."""
    if not isinstance(value, dict):
        return toml_value(value).encode("utf-8", "surrogatepass")
    lines = [f"{toml_string(str(k))} = {toml_value(v, k)}" for k, v in value.items() if not absent(k, v)]
    return "\n".join(lines).encode("utf-8", "surrogatepass")


@schemathesis.hook
def before_call(context, case, kwargs):
    """The stateful phase fills a request's fields from earlier answers: a job's FIX_RATE seconds may land
    beside a drawn `CRON`. The document forbids that only through the `quartz-cron` format, which no
    validator asserts, so schemathesis would count the admin's refusal against it. Such a positive case gets
    a Quartz expression (one has six or seven fields); negative cases are sent as drawn."""
    body = case.body
    meta = case.meta
    if not isinstance(body, dict) or body.get("scheduleType") != "CRON" or meta is None:
        return
    if meta.phase.name != "stateful" or meta.generation.mode != "positive":
        return
    conf = body.get("scheduleConf")
    if isinstance(conf, str) and len(conf.split()) < 6:
        body["scheduleConf"] = "0 0 0 * * ?"
