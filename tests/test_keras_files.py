"""The nets' file format lives with the nets: the core reads no Keras archive itself."""

import zipfile

import pytest

from hexzero import mctsfw
from hexzero.mctsfw import checkpoints
from hexzero.mctsfw.checkpoints import ModelFileError
from hexzero.nets.keras_files import check_model_name, has_model_name, keras_model_name


def test_the_core_keeps_only_atomic_writes_and_the_registry_lookup():
    for moved in ("keras_model_name", "has_model_name", "check_model_name", "save_keras_model"):
        assert not hasattr(checkpoints, moved), moved
    assert callable(checkpoints.atomic_path) and callable(checkpoints.load_net)


def test_the_model_name_is_read_without_tensorflow(tmp_path):
    path = tmp_path / "m.keras"
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("config.json", '{"config": {"name": "anet"}}')
    assert keras_model_name(path) == "anet"
    assert has_model_name(path, "anet") and not has_model_name(path, "pv_mlp")
    with pytest.raises(ModelFileError, match="was not made by the pv_mlp net"):
        check_model_name(path, "pv_mlp", "pv_mlp")
    (tmp_path / "text.keras").write_text("no zip")
    with pytest.raises(ModelFileError, match="not a zip archive"):
        keras_model_name(tmp_path / "text.keras")
    assert not has_model_name(tmp_path / "missing.keras", "anet")


def test_shipped_models_are_still_recognised():
    from pathlib import Path

    models = sorted(Path(__file__).resolve().parent.parent.glob("models/*/*.keras"))
    assert models
    assert all(checkpoints.net_class_for(path).can_load(path) for path in models)
    assert mctsfw.ModelFileError is ModelFileError
