"""docs/CONFIGURATION.md is what `codebox settings --markdown` prints from
the settings table (gateway/core/gw_config.h): a setting added, changed or
removed without `make docs` fails here."""
import os

from conftest import HERE, run_codebox

CONFIGURATION = os.path.join(HERE, "..", "..", "docs", "CONFIGURATION.md")


def test_configuration_md_is_generated_from_the_settings_table():
    r = run_codebox(["settings", "--markdown"])
    assert r.returncode == 0, r.stderr
    with open(CONFIGURATION, encoding="utf-8") as f:
        written = f.read()
    assert written == r.stdout, "docs/CONFIGURATION.md is stale: run `make docs`"


def test_every_setting_of_help_is_in_the_markdown():
    names = [line.split()[0] for line in run_codebox(["serve", "--help"]).stdout.splitlines()
             if line.startswith("  CODEBOX_")]
    markdown = run_codebox(["settings", "--markdown"]).stdout
    assert names and all("| `%s` |" % name in markdown for name in names)
