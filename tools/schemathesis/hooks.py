"""Hooks of the REST API's schemathesis run (.ci/run): the string formats the OpenAPI document names.

`quartz-cron` is a Quartz cron expression (six fields: seconds, minutes, hours, day of month, month, day
of week; one of the two day fields is `?`). No pattern states its grammar, so positive tests draw from
well-formed fields here; negative tests still send any other text, which the admin refuses.
"""

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
