"""Config: files, TETHER_* environment overrides, --home, and clear errors."""

from pathlib import Path

import pytest

from tether.common.errors import ConfigError
from tether.runtime.config import load_config
from tether.runtime.models.registry import build_chat_model
from tether.runtime.models.scripted import ScriptedChatModel


def test_defaults_are_hardened(tmp_path):
    cfg = load_config(tmp_path / "home", cwd=tmp_path, environ={})
    assert cfg.sandbox.network == "none"
    assert cfg.sandbox.read_only_root and cfg.sandbox.cap_drop_all
    assert cfg.home == (tmp_path / "home").resolve()
    assert cfg.ledger_path.parent == cfg.home


def test_file_then_env_then_home(tmp_path):
    (tmp_path / "tether.toml").write_text('home = "/from/file"\n[sandbox]\nimage = "x:1"\npids_limit = 50\n')
    env = {"TETHER_SANDBOX__PIDS_LIMIT": "77", "TETHER_MEMORY__TOP_K": "9", "TETHER_HOME": str(tmp_path / "envhome")}
    cfg = load_config(None, cwd=tmp_path, environ=env)
    assert cfg.sandbox.image == "x:1"
    assert cfg.sandbox.pids_limit == 77
    assert cfg.memory.top_k == 9
    assert cfg.home == (tmp_path / "envhome").resolve()
    assert load_config(tmp_path / "cli", cwd=tmp_path, environ=env).home == (tmp_path / "cli").resolve()


def test_override_of_hardening_is_logged(tmp_path, caplog):
    load_config(tmp_path, cwd=tmp_path, environ={"TETHER_SANDBOX__NETWORK": "host"})
    assert "sandbox.network overridden" in caplog.text


@pytest.mark.parametrize(
    ("env", "needle"),
    [
        ({"TETHER_SANDBOX__NO_SUCH_KEY": "1"}, "sandbox.no_such_key"),
        ({"TETHER_SANDBOX__PIDS_LIMIT": "-1"}, "TETHER_SANDBOX__PIDS_LIMIT"),
        ({"TETHER_BOGUS": "1"}, "bogus"),
    ],
)
def test_bad_values_name_the_key(tmp_path, env, needle):
    with pytest.raises(ConfigError, match=needle):
        load_config(tmp_path, cwd=tmp_path, environ=env)


def test_invalid_toml_names_the_file(tmp_path):
    (tmp_path / "tether.toml").write_text("[sandbox\n")
    with pytest.raises(ConfigError, match="tether.toml"):
        load_config(tmp_path, cwd=tmp_path, environ={})


def test_model_specs(tmp_path):
    script = tmp_path / "s.yaml"
    script.write_text("goal: g\nresponses:\n  planner: ['hello']\n")
    cfg = load_config(tmp_path, cwd=tmp_path, environ={"TETHER_MODEL__SPEC": f"scripted:{script}"})
    model = build_chat_model(cfg.model)
    assert isinstance(model, ScriptedChatModel)
    assert model.invoke("x", config={"metadata": {"tether_site": "planner"}}).content == "hello"
    for bad in ("gpt-4", "nope:x", "scripted:"):
        with pytest.raises(ConfigError):
            build_chat_model(cfg.model.model_copy(update={"spec": bad}))
    with pytest.raises(ConfigError, match="cannot read"):
        build_chat_model(cfg.model.model_copy(update={"spec": f"scripted:{Path(tmp_path, 'missing.yaml')}"}))
    with pytest.raises(ConfigError, match="no model configured"):
        build_chat_model(cfg.model.model_copy(update={"spec": None}))


def test_missing_provider_extra_names_the_extra(tmp_path):
    cfg = load_config(tmp_path, cwd=tmp_path, environ={})
    try:
        import langchain_anthropic  # noqa: F401
    except ImportError:
        with pytest.raises(ConfigError, match=r"tether\[anthropic\]"):
            build_chat_model(cfg.model.model_copy(update={"spec": "anthropic:claude"}))
    else:
        pytest.skip("langchain-anthropic is installed here")


def test_test_suite_variables_are_not_config(tmp_path):
    cfg = load_config(tmp_path, cwd=tmp_path, environ={"TETHER_REQUIRE_DOCKER": "1", "TETHER_TEST_X": "y"})
    assert cfg.home == tmp_path.resolve()


def test_config_doc_is_current_and_every_key_documented():
    from pydantic import BaseModel

    from tether.runtime.cli.config_docs import _field_docs, render
    from tether.runtime.config import TetherConfig

    doc = Path(__file__).parents[2] / "docs" / "config.md"
    assert doc.read_text() == render(), "regenerate: python -m tether.runtime.cli.config_docs > docs/config.md"
    for field in TetherConfig.model_fields.values():
        model = field.annotation
        if isinstance(model, type) and issubclass(model, BaseModel):
            missing = set(model.model_fields) - set(_field_docs(model))
            assert not missing, f"{model.__name__} fields without a docstring: {missing}"
