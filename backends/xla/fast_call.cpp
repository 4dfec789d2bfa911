// backends.xla._fast_call: `FastCall`, the callable behind `exe.<api>` of an XlaExecutor.
//
// While armed with the compiled executable of the last checked call (and the dtypes of its
// inputs), a call whose positional inputs are all NumPy arrays of those dtypes or JAX arrays
// goes straight to that executable's C++ dispatch, which checks shapes, dtypes and structure as
// jax.jit's does before running; the executor's state is threaded through (`owner.state`).
// Anything else (keywords, another count, another kind of input, a NumPy dtype that differs, or
// the dispatch refusing the signature with a TypeError) takes the checked path: `fallback`,
// the Python function that checks the inputs and re-arms this object. A call that fails in
// the dispatch for another reason is handed to `on_error(error)` and raised with its type.
// After a call, `checks._outstanding` (an int) says whether a runtime check reported something;
// then `checks.raise_pending()` raises it.
//
// Written against the CPython API (vectorcall) rather than nanobind's function binding: the
// point of this object is to cost less than one Python frame per call.

#include <Python.h>
#include <structmember.h>

#include <nanobind/nanobind.h>

#include <cstddef>

namespace {

constexpr Py_ssize_t kMaxInputs = 64;  // stack space for the dispatch's arguments

struct FastCall {
  PyObject_HEAD
  vectorcallfunc vectorcall;
  PyObject* dict;          // __name__, __doc__ and whatever else a user sets
  PyObject* fallback;      // the checked path: fallback(*args, **kwargs)
  PyObject* owner;         // the executor: `state` read before and written after each call
  PyObject* on_error;      // on_error(error) after the dispatch raised
  PyObject* checks;        // metagraph.runtime_checks
  PyObject* jax_array;     // JAX's concrete array type
  PyObject* ndarray;       // numpy.ndarray
  PyObject* compiled;      // the armed dispatch, or nullptr
  PyObject* dtypes;        // tuple: the armed inputs' dtypes
  Py_ssize_t count;        // the number of the API's inputs
};

PyObject* str_state;
PyObject* str_dtype;
PyObject* str_outstanding;
PyObject* str_raise_pending;

PyObject* slow(FastCall* self, PyObject* const* args, size_t nargsf, PyObject* kwnames) {
  return PyObject_Vectorcall(self->fallback, args, nargsf, kwnames);
}

// 1: the input can take the fast path, 0: it cannot, -1: an error is set.
int fits(FastCall* self, PyObject* value, PyObject* dtype) {
  PyTypeObject* kind = Py_TYPE(value);
  if (reinterpret_cast<PyObject*>(kind) == self->jax_array) return 1;
  if (reinterpret_cast<PyObject*>(kind) != self->ndarray) return 0;
  PyObject* actual = PyObject_GetAttr(value, str_dtype);
  if (actual == nullptr) return -1;
  // NumPy's built-in dtypes are singletons: the pointer test almost always decides
  int same = actual == dtype ? 1 : PyObject_RichCompareBool(actual, dtype, Py_EQ);
  Py_DECREF(actual);
  return same;
}

PyObject* fast_call(PyObject* callable, PyObject* const* args, size_t nargsf,
                    PyObject* kwnames) {
  auto* self = reinterpret_cast<FastCall*>(callable);
  Py_ssize_t n = PyVectorcall_NARGS(nargsf);
  if (self->compiled == nullptr || kwnames != nullptr || n != self->count || n >= kMaxInputs)
    return slow(self, args, nargsf, kwnames);
  for (Py_ssize_t i = 0; i < n; ++i) {
    int ok = fits(self, args[i], PyTuple_GET_ITEM(self->dtypes, i));
    if (ok < 0) return nullptr;
    if (ok == 0) return slow(self, args, nargsf, kwnames);
  }
  PyObject* stack[kMaxInputs + 1];
  PyObject* state = PyObject_GetAttr(self->owner, str_state);
  if (state == nullptr) return nullptr;
  stack[0] = state;
  for (Py_ssize_t i = 0; i < n; ++i) stack[i + 1] = args[i];
  PyObject* compiled = self->compiled;
  Py_INCREF(compiled);  // a re-arming during the call must not free it under us
  PyObject* result = PyObject_Vectorcall(compiled, stack, n + 1, nullptr);
  Py_DECREF(compiled);
  Py_DECREF(state);
  if (result == nullptr) {
    if (PyErr_ExceptionMatches(PyExc_TypeError)) {  // another signature: the checked path
      PyErr_Clear();
      return slow(self, args, nargsf, kwnames);
    }
    PyObject *type, *value, *traceback;
    PyErr_Fetch(&type, &value, &traceback);
    PyErr_NormalizeException(&type, &value, &traceback);
    if (traceback != nullptr) PyException_SetTraceback(value, traceback);
    PyObject* handled = PyObject_CallOneArg(self->on_error, value);
    if (handled == nullptr) {  // on_error's own exception wins, chained to the call's
      Py_XDECREF(type);
      Py_XDECREF(value);
      Py_XDECREF(traceback);
      return nullptr;
    }
    Py_DECREF(handled);
    PyErr_Restore(type, value, traceback);
    return nullptr;
  }
  if (!PyTuple_CheckExact(result) || PyTuple_GET_SIZE(result) != 2) {
    Py_DECREF(result);
    PyErr_SetString(PyExc_RuntimeError,
                    "backends.xla: a compiled API returned something other than "
                    "(state, outputs)");
    return nullptr;
  }
  PyObject* outputs = PyTuple_GET_ITEM(result, 1);
  Py_INCREF(outputs);
  int stored = PyObject_SetAttr(self->owner, str_state, PyTuple_GET_ITEM(result, 0));
  Py_DECREF(result);
  if (stored < 0) {
    Py_DECREF(outputs);
    return nullptr;
  }
  PyObject* outstanding = PyObject_GetAttr(self->checks, str_outstanding);
  if (outstanding == nullptr) {
    Py_DECREF(outputs);
    return nullptr;
  }
  int pending = PyObject_IsTrue(outstanding);
  Py_DECREF(outstanding);
  if (pending != 0) {
    PyObject* raised = pending < 0 ? nullptr
                                   : PyObject_CallMethodNoArgs(self->checks, str_raise_pending);
    if (raised == nullptr) {
      Py_DECREF(outputs);
      return nullptr;
    }
    Py_DECREF(raised);
  }
  return outputs;
}

int fast_init(PyObject* object, PyObject* args, PyObject* kwargs) {
  auto* self = reinterpret_cast<FastCall*>(object);
  static const char* names[] = {"fallback", "owner",   "on_error", "checks",
                                "jax_array", "ndarray", "count",    nullptr};
  PyObject *fallback, *owner, *on_error, *checks, *jax_array, *ndarray;
  Py_ssize_t count;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "OOOOOOn:FastCall", const_cast<char**>(names),
                                   &fallback, &owner, &on_error, &checks, &jax_array, &ndarray,
                                   &count))
    return -1;
  if (!PyCallable_Check(fallback) || !PyCallable_Check(on_error)) {
    PyErr_SetString(PyExc_TypeError, "FastCall: fallback and on_error must be callable");
    return -1;
  }
  if (!PyType_Check(jax_array) || !PyType_Check(ndarray) || count < 0) {
    PyErr_SetString(PyExc_TypeError,
                    "FastCall: jax_array and ndarray must be types, count >= 0");
    return -1;
  }
  Py_INCREF(fallback);
  Py_XSETREF(self->fallback, fallback);
  Py_INCREF(owner);
  Py_XSETREF(self->owner, owner);
  Py_INCREF(on_error);
  Py_XSETREF(self->on_error, on_error);
  Py_INCREF(checks);
  Py_XSETREF(self->checks, checks);
  Py_INCREF(jax_array);
  Py_XSETREF(self->jax_array, jax_array);
  Py_INCREF(ndarray);
  Py_XSETREF(self->ndarray, ndarray);
  self->count = count;
  self->vectorcall = fast_call;
  return 0;
}

PyObject* fast_arm(PyObject* object, PyObject* const* args, Py_ssize_t n) {
  auto* self = reinterpret_cast<FastCall*>(object);
  if (n != 2 || !PyCallable_Check(args[0]) || !PyTuple_CheckExact(args[1]) ||
      PyTuple_GET_SIZE(args[1]) != self->count) {
    PyErr_SetString(PyExc_TypeError,
                    "FastCall.arm(compiled, dtypes): a callable and a tuple of one dtype per "
                    "input");
    return nullptr;
  }
  Py_INCREF(args[0]);
  Py_XSETREF(self->compiled, args[0]);
  Py_INCREF(args[1]);
  Py_XSETREF(self->dtypes, args[1]);
  Py_RETURN_NONE;
}

PyObject* fast_disarm(PyObject* object, PyObject*) {
  auto* self = reinterpret_cast<FastCall*>(object);
  Py_CLEAR(self->compiled);
  Py_CLEAR(self->dtypes);
  Py_RETURN_NONE;
}

PyObject* fast_armed(PyObject* object, void*) {
  return PyBool_FromLong(reinterpret_cast<FastCall*>(object)->compiled != nullptr);
}

int fast_traverse(PyObject* object, visitproc visit, void* arg) {
  auto* self = reinterpret_cast<FastCall*>(object);
  Py_VISIT(Py_TYPE(object));
  Py_VISIT(self->dict);
  Py_VISIT(self->fallback);
  Py_VISIT(self->owner);
  Py_VISIT(self->on_error);
  Py_VISIT(self->checks);
  Py_VISIT(self->jax_array);
  Py_VISIT(self->ndarray);
  Py_VISIT(self->compiled);
  Py_VISIT(self->dtypes);
  return 0;
}

int fast_clear(PyObject* object) {
  auto* self = reinterpret_cast<FastCall*>(object);
  Py_CLEAR(self->dict);
  Py_CLEAR(self->fallback);
  Py_CLEAR(self->owner);
  Py_CLEAR(self->on_error);
  Py_CLEAR(self->checks);
  Py_CLEAR(self->jax_array);
  Py_CLEAR(self->ndarray);
  Py_CLEAR(self->compiled);
  Py_CLEAR(self->dtypes);
  return 0;
}

void fast_dealloc(PyObject* object) {
  PyTypeObject* type = Py_TYPE(object);
  PyObject_GC_UnTrack(object);
  fast_clear(object);
  type->tp_free(object);
  Py_DECREF(type);
}

PyMethodDef fast_methods[] = {
    {"arm", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)(void)>(fast_arm)),
     METH_FASTCALL,
     "arm(compiled, dtypes): take the fast path to `compiled` for inputs of these dtypes"},
    {"disarm", fast_disarm, METH_NOARGS, "disarm(): every call takes the checked path"},
    {nullptr, nullptr, 0, nullptr}};

PyMemberDef fast_members[] = {
    {"__dictoffset__", T_PYSSIZET, offsetof(FastCall, dict), READONLY, nullptr},
    {"__vectorcalloffset__", T_PYSSIZET, offsetof(FastCall, vectorcall), READONLY, nullptr},
    {nullptr, 0, 0, 0, nullptr}};

PyGetSetDef fast_getset[] = {
    {"armed", fast_armed, nullptr, "Whether calls may take the fast path.", nullptr},
    {nullptr, nullptr, nullptr, nullptr, nullptr}};

PyObject* fast_call_slot(PyObject* callable, PyObject* args, PyObject* kwargs) {
  return PyVectorcall_Call(callable, args, kwargs);
}

PyType_Slot fast_slots[] = {
    {Py_tp_doc, const_cast<char*>(
                    "FastCall(fallback, owner, on_error, checks, jax_array, ndarray, count): "
                    "the call of one root API of an XlaExecutor (see backends/xla/fast_call.cpp)")},
    {Py_tp_init, reinterpret_cast<void*>(fast_init)},
    {Py_tp_call, reinterpret_cast<void*>(fast_call_slot)},
    {Py_tp_traverse, reinterpret_cast<void*>(fast_traverse)},
    {Py_tp_clear, reinterpret_cast<void*>(fast_clear)},
    {Py_tp_dealloc, reinterpret_cast<void*>(fast_dealloc)},
    {Py_tp_methods, fast_methods},
    {Py_tp_members, fast_members},
    {Py_tp_getset, fast_getset},
    {0, nullptr}};

PyType_Spec fast_spec = {
    "backends.xla._fast_call.FastCall", sizeof(FastCall), 0,
    Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_HAVE_VECTORCALL, fast_slots};

}  // namespace

NB_MODULE(_fast_call, m) {
  str_state = PyUnicode_InternFromString("state");
  str_dtype = PyUnicode_InternFromString("dtype");
  str_outstanding = PyUnicode_InternFromString("_outstanding");
  str_raise_pending = PyUnicode_InternFromString("raise_pending");
  PyObject* type = PyType_FromSpec(&fast_spec);
  if (type == nullptr) throw nanobind::python_error();
  if (PyModule_AddObject(m.ptr(), "FastCall", type) < 0) {
    Py_DECREF(type);
    throw nanobind::python_error();
  }
}
