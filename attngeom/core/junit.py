"""JUnit XML for ``attngeom check-certificates --junit FILE``, so a CI shows which claim moved.

One ``<testcase>`` per certificate (``classname`` the claim, ``name`` the file, ``time`` the
re-run's seconds); a certificate that differs from its re-run carries a ``<failure>``
whose message is the first difference and whose text lists them all (field, both values,
the rule used); one that fails validation carries an ``<error>`` (bad input).  The schema
is the common one that GitLab, Jenkins, GitHub test reporters and pytest's
``--junitxml`` read.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections.abc import Sequence

from attngeom.core.certificates import CheckResult

SUITE = "attngeom.check-certificates"


def junit_xml(results: Sequence[CheckResult]) -> str:
    """The JUnit XML document (one testsuite) of the re-check ``results``."""
    failures = sum(1 for r in results if not r.ok and not r.invalid)
    errors = sum(1 for r in results if r.invalid)
    total = sum(r.seconds for r in results)
    suites = ET.Element("testsuites", name=SUITE, tests=str(len(results)),
                        failures=str(failures), errors=str(errors), time=f"{total:.3f}")
    suite = ET.SubElement(suites, "testsuite", name=SUITE, tests=str(len(results)),
                          failures=str(failures), errors=str(errors), skipped="0",
                          time=f"{total:.3f}")
    for result in results:
        case = ET.SubElement(suite, "testcase", classname=result.claim, name=result.path.name,
                             time=f"{result.seconds:.3f}")
        if not result.ok:
            tag = "error" if result.invalid else "failure"
            outcome = ET.SubElement(case, tag, message=result.problems[0][:500],
                                    type="invalid-certificate" if result.invalid else "mismatch")
            outcome.text = "\n".join(result.problems)
    ET.indent(suites)
    return ET.tostring(suites, encoding="unicode", xml_declaration=True) + "\n"
