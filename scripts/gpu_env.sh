# Sourced by benchmarks/gpu.sh and scripts/selfplay_burst.sh, from the repository's root: a
# Python ($python) that runs hexzero on Keras over $KERAS_BACKEND (default: jax), on a GPU
# machine that may reach no package index. hexzero itself needs no install (python cli.py
# runs from the checkout).
#
#   - $PYTHON (default python3) that imports keras, the backend, numba, pluggy, networkx and
#     tomli_w is used as it is;
#   - else the wheels in $HEXZERO_WHEELS (default: .whl) are unpacked into /tmp/hexzero-site,
#     no index asked, and put on PYTHONPATH (for an image with JAX, numba, pluggy and networkx
#     but not Keras: the wheels of keras, namex, optree and tomli-w, downloaded elsewhere with
#     pip download --python-version of that machine; docs/speed.md, "On a GPU");
#   - else pip installs the gpu extra (pip install -e ".[gpu]").
python=${PYTHON:-python3}
export KERAS_BACKEND=${KERAS_BACKEND:-jax} TF_CPP_MIN_LOG_LEVEL=${TF_CPP_MIN_LOG_LEVEL:-3}
gpu_env_ready() { $python -c "import keras, $KERAS_BACKEND, numba, pluggy, networkx, tomli_w" 2>/dev/null; }
if ! gpu_env_ready; then
    wheels=${HEXZERO_WHEELS:-.whl}
    if compgen -G "$wheels/*.whl" > /dev/null; then
        $python -m pip install -q --no-index --no-deps --no-compile --upgrade --target /tmp/hexzero-site "$wheels"/*.whl
        export PYTHONPATH=/tmp/hexzero-site${PYTHONPATH:+:$PYTHONPATH}
    fi
    gpu_env_ready || $python -m pip install -q -e ".[gpu]"
fi
gpu_env_ready || { echo "gpu_env.sh: $python cannot import keras, $KERAS_BACKEND, numba, pluggy, networkx and tomli_w" >&2; return 2; }
