"""Install hints fit how the package was installed (issue 55: users of the wheel were told
`pip install -e ".[games]"`, a command for a source tree)."""

from importlib.metadata import PackageNotFoundError

import pytest

from metagraph import install_hints


def test_an_editable_install_is_told_the_source_trees_command(monkeypatch):
    monkeypatch.setattr(install_hints, "editable", lambda: True)
    assert install_hints.install_hint("games") == 'pip install -e ".[games]"'


def test_a_wheel_is_told_the_extra_without_editable(monkeypatch):
    monkeypatch.setattr(install_hints, "editable", lambda: False)
    assert install_hints.install_hint("video") == \
        'pip install ".[video]" (in the clone the package was installed from)'


@pytest.mark.parametrize("record, editable", [
    ('{"dir_info": {"editable": true}, "url": "file:///work/main"}', True),
    ('{"archive_info": {}, "url": "file:///tmp/metagraph_rl-0.1-cp311.whl"}', False),
    (None, False),  # installed by a tool that writes no direct_url.json (a wheel)
    ("not json", False),
    (PackageNotFoundError, True),  # imported from a source tree that was never installed
])
def test_pips_record_says_how_it_was_installed(monkeypatch, record, editable):
    class Distribution:
        def read_text(self, name):
            assert name == "direct_url.json"
            return record

    def distribution(name):
        assert name == "metagraph-rl"
        if record is PackageNotFoundError:
            raise PackageNotFoundError(name)
        return Distribution()

    monkeypatch.setattr(install_hints.metadata, "distribution", distribution)
    install_hints.editable.cache_clear()
    try:
        assert install_hints.editable() is editable
    finally:
        install_hints.editable.cache_clear()
