"""Write PyTorch .pt files (the zip layout of torch.save, torch >= 1.6) WITHOUT torch, for the
e2e tests of golden-dump's .pt reader: the stdlib pickle and zipfile, with stand-in classes whose
__reduce__ names torch's globals (torch._utils._rebuild_tensor_v2, torch.FloatStorage, ...).

    import pt_writer as pw
    s = pw.Storage(np.arange(6, dtype=np.float32))   # one storage member data/KEY
    t = pw.Tensor(s, offset=0, shape=(2, 3), stride=(3, 1))
    pw.save({"w": t}, "x.pt")                         # a state_dict

The stand-ins live in fake modules registered as sys.modules['torch'] and
sys.modules['torch._utils'] of this process only: never import real torch here.
"""
import collections
import io
import pickle
import sys
import types
import zipfile

import numpy as np

_torch = types.ModuleType("torch")
_utils = types.ModuleType("torch._utils")
_torch._utils = _utils
if "torch" in sys.modules and not getattr(sys.modules["torch"], "_pt_writer_fake", False):
    raise RuntimeError("pt_writer must not run next to the real torch")
_torch._pt_writer_fake = True
sys.modules["torch"] = _torch
sys.modules["torch._utils"] = _utils


def _rebuild_tensor_v2(*args):  # never called: only its name is pickled
    raise AssertionError("pickled stand-in called")


def _rebuild_parameter(*args):
    raise AssertionError("pickled stand-in called")


for _f in (_rebuild_tensor_v2, _rebuild_parameter):
    _f.__module__ = "torch._utils"
    setattr(_utils, _f.__name__, _f)

STORAGE_TYPES = {
    "float32": "FloatStorage", "float64": "DoubleStorage", "float16": "HalfStorage",
    "bfloat16": "BFloat16Storage", "int64": "LongStorage", "int32": "IntStorage",
    "int16": "ShortStorage", "int8": "CharStorage", "uint8": "ByteStorage", "bool": "BoolStorage",
}
_storage_classes = {}
for _dt, _name in STORAGE_TYPES.items():
    _cls = type(_name, (), {"__module__": "torch"})
    setattr(_torch, _name, _cls)
    _storage_classes[_dt] = _cls


class Storage:
    """A storage: the raw bytes of `data` (a numpy array, any shape) as one data/KEY member.
    dtype overrides the storage type name (e.g. 'bfloat16' for a uint16 array of bf16 bits)."""
    _next = 0

    def __init__(self, data, dtype=None, key=None, numel=None):
        self.data = np.ascontiguousarray(data)
        self.dtype = dtype or self.data.dtype.name
        self.numel = self.data.size if numel is None else numel
        if key is None:
            key = str(Storage._next)
            Storage._next += 1
        self.key = key


class Tensor:
    def __init__(self, storage, offset=0, shape=None, stride=None, param=False, hooks=None):
        self.storage = storage
        self.offset = offset
        self.shape = tuple(shape if shape is not None else (storage.numel,))
        if stride is None:
            stride, acc = [], 1
            for d in reversed(self.shape):
                stride.insert(0, acc)
                acc *= d
        self.stride = tuple(stride)
        self.param = param
        self.hooks = hooks

    def __reduce__(self):
        hooks = collections.OrderedDict() if self.hooks is None else self.hooks
        inner = (self.storage, self.offset, self.shape, self.stride, False, hooks)
        if not self.param:
            return (_rebuild_tensor_v2, inner)
        return (_rebuild_parameter, (_Inner(inner), False, collections.OrderedDict()))


class _Inner:
    def __init__(self, args):
        self.args = args

    def __reduce__(self):
        return (_rebuild_tensor_v2, self.args)


class _Pickler(pickle.Pickler):
    def __init__(self, f, protocol):
        super().__init__(f, protocol=protocol)
        self.storages = {}

    def persistent_id(self, obj):
        if isinstance(obj, Storage):
            self.storages[obj.key] = obj
            return ("storage", _storage_classes[obj.dtype], obj.key, "cpu", obj.numel)
        return None


def pickle_bytes(obj, protocol=2):
    buf = io.BytesIO()
    p = _Pickler(buf, protocol)
    p.dump(obj)
    return buf.getvalue(), p.storages


def save(obj, path, archive=None, protocol=2, compress=False, byteorder=None, extra=None):
    """Write obj as torch.save would: ARCHIVE/data.pkl, ARCHIVE/data/KEY, ARCHIVE/version and
    ARCHIVE/byteorder when given. compress deflates every member (torch never does)."""
    if archive is None:
        archive = path.rsplit("/", 1)[-1].rsplit(".", 1)[0]
    data, storages = pickle_bytes(obj, protocol)
    method = zipfile.ZIP_DEFLATED if compress else zipfile.ZIP_STORED
    with zipfile.ZipFile(path, "w", method) as z:
        z.writestr(archive + "/data.pkl", data)
        if byteorder:
            z.writestr(archive + "/byteorder", byteorder)
        for key, s in storages.items():
            raw = s.data.tobytes() if byteorder != "big" else s.data.byteswap().tobytes()
            z.writestr(archive + "/data/" + key, raw)
        z.writestr(archive + "/version", "3\n")
        for name, raw in (extra or {}).items():
            z.writestr(name, raw)


def save_raw(pkl, path, archive="archive", members=None):
    """A .pt whose data.pkl is the given bytes (hand-assembled or hostile pickles)."""
    with zipfile.ZipFile(path, "w", zipfile.ZIP_STORED) as z:
        z.writestr(archive + "/data.pkl", pkl)
        for name, raw in (members or {}).items():
            z.writestr(archive + "/" + name, raw)
        z.writestr(archive + "/version", "3\n")
