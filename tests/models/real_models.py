"""The two models with real trained weights in the model tests (issue 11, item 10): PP-OCRv4 text
detection and recognition, as shipped inside the pip package `rapidocr-onnxruntime` (opset 12,
exported by paddle2onnx, weights as Constant nodes, dynamic batch, height and width).

On noise a detector outputs almost nothing, so `text_image` renders a text-like page (dark glyph
strokes from a 5x7 bitmap font on a light, slightly uneven background) with numpy alone, the same
pixels on every machine for a given seed. `det_input` and `rec_input` turn pages into the models'
inputs the way RapidOCR preprocesses them ((x / 255 - 0.5) / 0.5, channels first).

    python3 tests/models/real_models.py      # paths, and what ORT makes of a rendered page
"""
import importlib.util
from pathlib import Path

import numpy as np

PACKAGE = "rapidocr_onnxruntime"  # pip install rapidocr-onnxruntime (scripts/setup.sh installs it)
DET_FILE = "ch_PP-OCRv4_det_infer.onnx"
REC_FILE = "ch_PP-OCRv4_rec_infer.onnx"
REC_HEIGHT = 48  # the recogniser's fixed input height; its width is free (T = width / 8 steps)


def _models_dir():
    spec = importlib.util.find_spec(PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        raise FileNotFoundError(f"the pip package rapidocr-onnxruntime (module {PACKAGE}) is not installed; "
                                f"scripts/setup.sh installs it")
    return Path(list(spec.submodule_search_locations)[0]) / "models"


def _model(file_name):
    path = _models_dir() / file_name
    if not path.is_file():
        raise FileNotFoundError(f"{path}: expected the PP-OCRv4 model {file_name} inside {PACKAGE}")
    return path


def det_model_path():
    """PP-OCRv4 detection (DB): x [N, 3, H, W] -> probability map [N, 1, H, W]."""
    return _model(DET_FILE)


def rec_model_path():
    """PP-OCRv4 recognition (SVTR + CTC): x [N, 3, 48, W] -> [N, W / 8, 6625] softmax."""
    return _model(REC_FILE)


def available():
    return importlib.util.find_spec(PACKAGE) is not None


# A 5x7 bitmap font: seven rows of five bits per glyph (the classic LCD character shapes).
_FONT = {
    "A": "0E 11 11 1F 11 11 11", "B": "1E 11 11 1E 11 11 1E", "C": "0E 11 10 10 10 11 0E",
    "D": "1E 11 11 11 11 11 1E", "E": "1F 10 10 1E 10 10 1F", "F": "1F 10 10 1E 10 10 10",
    "G": "0E 11 10 17 11 11 0F", "H": "11 11 11 1F 11 11 11", "I": "0E 04 04 04 04 04 0E",
    "K": "11 12 14 18 14 12 11", "L": "10 10 10 10 10 10 1F", "M": "11 1B 15 15 11 11 11",
    "N": "11 11 19 15 13 11 11", "O": "0E 11 11 11 11 11 0E", "P": "1E 11 11 1E 10 10 10",
    "R": "1E 11 11 1E 14 12 11", "S": "0F 10 10 0E 01 01 1E", "T": "1F 04 04 04 04 04 04",
    "U": "11 11 11 11 11 11 0E", "V": "11 11 11 11 11 0A 04", "W": "11 11 11 15 15 15 0A",
    "X": "11 11 0A 04 0A 11 11", "Y": "11 11 0A 04 04 04 04", "0": "0E 11 13 15 19 11 0E",
    "1": "04 0C 04 04 04 04 0E", "2": "0E 11 01 02 04 08 1F", "3": "1F 02 04 02 01 11 0E",
    "5": "1F 10 1E 01 01 11 0E", "6": "06 08 10 1E 11 11 0E", "8": "0E 11 11 0E 11 11 0E",
    " ": "00 00 00 00 00 00 00",
}
_WORDS = ["ANVIL", "COMPILES", "ONNX", "MODELS", "TO", "ONE", "FILE", "RUN", "IT", "ANYWHERE", "TEXT",
          "DETECTION", "WORKS", "ON", "REAL", "WEIGHTS", "2026", "RESNET", "18", "KERNEL", "GRAPH", "PASS",
          "SHAPE", "FUSION", "VM", "LLVM", "BATCH", "3", "5", "6", "8", "0", "1"]


def _glyph(ch):
    rows = [int(h, 16) for h in _FONT[ch].split()]
    return np.array([[(r >> (4 - c)) & 1 for c in range(5)] for r in rows], dtype=np.float32)


def render_line(text, scale):
    """Ink coverage in [0, 1] of one line of text, `scale` pixels per font dot, one dot of spacing."""
    cells = [np.pad(_glyph(ch), ((0, 0), (0, 1))) for ch in text.upper()]
    dots = np.concatenate(cells, axis=1)
    ink = np.kron(dots, np.ones((scale, scale), dtype=np.float32))
    # Soften the edges a little (a 3-tap box filter each way), as printed text is anti-aliased.
    ink = np.pad(ink, 1)
    ink = (ink[:-2] + ink[1:-1] + ink[2:]) / 3
    return (ink[:, :-2] + ink[:, 1:-1] + ink[:, 2:]) / 3


def _phrase(rng, n_words):
    return " ".join(rng.choice(_WORDS) for _ in range(n_words))


def text_image(height=640, width=640, seed=0):
    """A page of text-like lines: uint8 [height, width, 3], dark ink on a light background."""
    rng = np.random.default_rng(seed)
    yy, xx = np.mgrid[0:height, 0:width].astype(np.float32)
    paper = 225 + 15 * np.sin(xx / width * 3 + seed) * np.cos(yy / height * 2)  # uneven lighting
    ink = np.zeros((height, width), dtype=np.float32)
    y = int(rng.integers(8, 24))
    while True:
        scale = int(rng.integers(2, 6))
        line = render_line(_phrase(rng, int(rng.integers(2, 6))), scale)
        h, w = line.shape
        if y + h >= height:
            break
        x = int(rng.integers(4, max(5, width // 4)))
        w = min(w, width - x)
        ink[y:y + h, x:x + w] = np.maximum(ink[y:y + h, x:x + w], line[:, :w])
        y += h + int(rng.integers(scale * 4, scale * 10))
    colour = rng.uniform(10, 60, size=3)  # near-black ink with a tint per page
    page = paper[..., None] * (1 - ink[..., None]) + colour * ink[..., None]
    page += rng.normal(0, 3, size=page.shape)  # sensor noise
    return np.clip(page, 0, 255).astype(np.uint8)


def text_line_image(width=320, seed=0):
    """One line of text at the recogniser's height: uint8 [48, width, 3]."""
    rng = np.random.default_rng(seed)
    line = render_line(_phrase(rng, 3), 4)[:, :width]
    ink = np.zeros((REC_HEIGHT, width), dtype=np.float32)
    top = (REC_HEIGHT - line.shape[0]) // 2
    ink[top:top + line.shape[0], 4:4 + min(line.shape[1], width - 4)] = line[:, :width - 4]
    page = 230 * (1 - ink[..., None]) + 30 * ink[..., None] + rng.normal(0, 3, size=(REC_HEIGHT, width, 3))
    return np.clip(page, 0, 255).astype(np.uint8)


def _normalise(images):
    x = np.stack(images).astype(np.float32) / 255.0
    return np.ascontiguousarray(((x - 0.5) / 0.5).transpose(0, 3, 1, 2))


def det_input(batch=1, height=640, width=640, seed=0):
    """x for the detector: [batch, 3, height, width] float32 (sides must be multiples of 32)."""
    if height % 32 or width % 32:
        raise ValueError(f"det_input: height and width must be multiples of 32, got {height}x{width}")
    return {"x": _normalise([text_image(height, width, seed + i) for i in range(batch)])}


def rec_input(batch=1, width=320, seed=0):
    """x for the recogniser: [batch, 3, 48, width] float32."""
    return {"x": _normalise([text_line_image(width, seed + i) for i in range(batch)])}


def _main():
    import onnxruntime as ort

    for name, path, feeds in (("det", det_model_path(), det_input(batch=1)),
                              ("rec", rec_model_path(), rec_input(batch=1))):
        session = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
        (out,) = session.run(None, feeds)
        print(f"{name}: {path} ({path.stat().st_size / 1e6:.1f} MB) in {list(feeds['x'].shape)} "
              f"out {list(out.shape)} max {out.max():.3f} mean {out.mean():.4f}")
        if name == "det":
            print(f"  pixels over the 0.3 text threshold: {(out > 0.3).mean() * 100:.1f} %")
        else:
            print(f"  steps whose best class is not blank: {(out.argmax(-1) != 0).sum()} of {out.shape[1]}")


if __name__ == "__main__":
    _main()
