/* The low-level Python module dataparallel.capi, generated from the public header.
   Conventions of the generated functions (the idiomatic layer in dataparallel/ builds on
   them):
   - a dp_result other than DP_OK raises dataparallel.Error's subclass for the code, with
     dp_last_error()'s message; otherwise the function returns its outputs (None if none,
     one value, or a list when several);
   - output parameters (handles, numbers, strings, devices) are not passed: they come back
     as return values; a handle comes back as a proxy that owns its reference;
   - devices are (type, index) tuples, shapes are sequences of ints, tensors and modules in
     lists are proxies, caller memory is any object with the buffer protocol;
   - the GIL is released around every call that may wait for a device worker (all but
     the metadata getters marked %nothread below), because a worker may need the GIL to
     run a Python custom module's forward. */
%module(package="dataparallel", threads="1") capi

%include <stdint.i>

/* ---- numbers: whatever Python can use as one, NumPy's scalars included ------------------
   SWIG's own conversions take only Python ints and floats (np.int64(2) and np.float32(0.5)
   were TypeErrors). Integers go through __index__ (a float is still refused), with a range
   check; floating arguments through __float__. */
%define DP_PY_SIGNED_IN(TYPE, LO, HI)
%typemap(in) TYPE {
  PyObject* index = PyNumber_Index($input);
  if (!index) SWIG_fail;
  int overflow = 0;
  const long long v = PyLong_AsLongLongAndOverflow(index, &overflow);
  Py_DECREF(index);
  if (v == -1 && PyErr_Occurred()) SWIG_fail;
  if (overflow || v < (LO) || v > (HI)) {
    PyErr_SetString(PyExc_OverflowError, "in method '$symname', argument $argnum does not fit in TYPE");
    SWIG_fail;
  }
  $1 = (TYPE)v;
}
%typemap(typecheck, precedence=SWIG_TYPECHECK_INTEGER) TYPE { $1 = PyIndex_Check($input); }
%enddef
%define DP_PY_UNSIGNED_IN(TYPE, HI)
%typemap(in) TYPE {
  PyObject* index = PyNumber_Index($input);
  if (!index) SWIG_fail;
  const unsigned long long v = PyLong_AsUnsignedLongLong(index);
  Py_DECREF(index);
  if (v == (unsigned long long)-1 && PyErr_Occurred()) SWIG_fail;
  if (v > (HI)) {
    PyErr_SetString(PyExc_OverflowError, "in method '$symname', argument $argnum does not fit in TYPE");
    SWIG_fail;
  }
  $1 = (TYPE)v;
}
%typemap(typecheck, precedence=SWIG_TYPECHECK_INTEGER) TYPE { $1 = PyIndex_Check($input); }
%enddef
DP_PY_SIGNED_IN(int32_t, INT32_MIN, INT32_MAX)
DP_PY_SIGNED_IN(int64_t, INT64_MIN, INT64_MAX)
DP_PY_UNSIGNED_IN(uint64_t, UINT64_MAX)
DP_PY_UNSIGNED_IN(size_t, SIZE_MAX)
%typemap(in) double {
  $1 = PyFloat_AsDouble($input);
  if ($1 == -1.0 && PyErr_Occurred()) SWIG_fail;
}
%typemap(typecheck, precedence=SWIG_TYPECHECK_DOUBLE) double {
  $1 = PyFloat_Check($input) || PyLong_Check($input) || PyNumber_Check($input);
}

%{
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include <dlpack/dlpack.h>

#include "dataparallel/dataparallel.h"
%}


/* ---- running Python code from library threads -----------------------------------------
   Library callbacks (memory deleters, destroy, log) may run on a device worker while the
   thread that waits for that worker holds the GIL. They must not block on the GIL, so
   they run now if this thread already holds it, else later on the main thread through
   Py_AddPendingCall. */
%{
typedef struct dp_py_deferred {
  void (*fn)(void*);
  void* arg;
  struct dp_py_deferred* next;
} dp_py_deferred;

static pthread_mutex_t dp_py_deferred_mu = PTHREAD_MUTEX_INITIALIZER;
/* First in, first out: a log message queued before its context ended is delivered before
   the log function's reference goes (dp_py_log_free queues that last). */
static dp_py_deferred* dp_py_deferred_head = NULL;
static dp_py_deferred* dp_py_deferred_tail = NULL;
static int dp_py_deferred_scheduled = 0;

/* Runs everything queued, oldest first, one item at a time: an item that calls the library
   runs a nested flush, which goes on in the same order. Needs the GIL. */
static int dp_py_run_deferred(void* unused) {
  (void)unused;
  for (;;) {
    pthread_mutex_lock(&dp_py_deferred_mu);
    dp_py_deferred* d = dp_py_deferred_head;
    if (!d) {
      dp_py_deferred_scheduled = 0;
      pthread_mutex_unlock(&dp_py_deferred_mu);
      return 0;
    }
    /* the dp_result typemap reads the head unlocked */
    __atomic_store_n(&dp_py_deferred_head, d->next, __ATOMIC_RELEASE);
    if (!d->next) dp_py_deferred_tail = NULL;
    pthread_mutex_unlock(&dp_py_deferred_mu);
    d->fn(d->arg);
    free(d);
  }
}

/* Queues fn(arg) to run with the GIL, on a Python thread's next library call or the main
   thread's pending calls. */
static void dp_py_defer(void (*fn)(void*), void* arg) {
  dp_py_deferred* d = (dp_py_deferred*)malloc(sizeof *d);
  if (!d) return; /* out of memory: leaking beats blocking a worker */
  d->fn = fn;
  d->arg = arg;
  d->next = NULL;
  pthread_mutex_lock(&dp_py_deferred_mu);
  if (dp_py_deferred_tail) {
    dp_py_deferred_tail->next = d;
  } else {
    __atomic_store_n(&dp_py_deferred_head, d, __ATOMIC_RELEASE);
  }
  dp_py_deferred_tail = d;
  const int schedule = !dp_py_deferred_scheduled;
  dp_py_deferred_scheduled = 1;
  pthread_mutex_unlock(&dp_py_deferred_mu);
  /* A full pending-call queue only delays the work to the next deferral or flush. */
  if (schedule && Py_AddPendingCall(dp_py_run_deferred, NULL) != 0) {
    pthread_mutex_lock(&dp_py_deferred_mu);
    dp_py_deferred_scheduled = 0;
    pthread_mutex_unlock(&dp_py_deferred_mu);
  }
}

static void dp_py_call_with_gil(void (*fn)(void*), void* arg) {
  if (Py_IsInitialized() && PyGILState_Check()) {
    fn(arg);
    return;
  }
  dp_py_defer(fn, arg);
}

static void dp_py_decref(void* obj) { Py_DECREF((PyObject*)obj); }

/* ---- errors ---- */

/* Sets the Python exception for `code`: dataparallel.errors builds it from the code and
   the calling thread's last error message. */
static void dp_py_raise(dp_result code) {
  static PyObject* from_code = NULL;
  const char* message = dp_last_error();
  PyObject* text = PyUnicode_DecodeUTF8(message, (Py_ssize_t)strlen(message), "replace");
  if (!text) return;
  if (!from_code) {
    PyObject* errors = PyImport_ImportModule("dataparallel.errors");
    if (errors) {
      from_code = PyObject_GetAttrString(errors, "from_code");
      Py_DECREF(errors);
    }
    if (!from_code) {
      Py_DECREF(text);
      return;
    }
  }
  PyObject* exc = PyObject_CallFunction(from_code, "iO", (int)code, text);
  Py_DECREF(text);
  if (exc) {
    PyErr_SetObject((PyObject*)Py_TYPE(exc), exc);
    Py_DECREF(exc);
  }
}

/* ---- conversions ---- */

/* s as UTF-8 text for C (owned by s, valid while it lives), or NULL with TypeError when s
   is not a str, or ValueError when it holds a NUL, which would end the text early in C (a
   path "a\0b" would name file "a"; open() refuses it too). `what` names s in messages. */
static const char* dp_py_text(PyObject* s, const char* what) {
  Py_ssize_t size = 0;
  const char* text = PyUnicode_Check(s) ? PyUnicode_AsUTF8AndSize(s, &size) : NULL;
  if (!text) {
    if (!PyErr_Occurred()) {
      PyErr_Format(PyExc_TypeError, "%s must be str, not %.200s", what, Py_TYPE(s)->tp_name);
    }
    return NULL;
  }
  if (strlen(text) != (size_t)size) {
    PyErr_Format(PyExc_ValueError, "%s: embedded null character", what);
    return NULL;
  }
  return text;
}

static int dp_py_device(PyObject* o, dp_device* d) {
  long type, index;
  if (!PyTuple_Check(o) || PyTuple_GET_SIZE(o) != 2) {
    PyErr_Format(PyExc_TypeError, "a device is a (type, index) tuple, not %R", o);
    return -1;
  }
  type = PyLong_AsLong(PyTuple_GET_ITEM(o, 0));
  if (type == -1 && PyErr_Occurred()) return -1;
  index = PyLong_AsLong(PyTuple_GET_ITEM(o, 1));
  if (index == -1 && PyErr_Occurred()) return -1;
  /* Out of int32's range would wrap onto a device that exists (2**32 onto 0). */
  if (type < INT32_MIN || type > INT32_MAX || index < INT32_MIN || index > INT32_MAX) {
    PyErr_Format(PyExc_OverflowError, "device (%ld, %ld) does not fit 32-bit integers", type,
                 index);
    return -1;
  }
  d->type = (dp_device_type)type;
  d->index = (int32_t)index;
  return 0;
}

static PyObject* dp_py_from_device(dp_device d) {
  return Py_BuildValue("(ii)", (int)d.type, (int)d.index);
}

/* A list of n devices from a sequence (NULL, 0 for None). */
static int dp_py_devices(PyObject* o, dp_device** out, size_t* n) {
  *out = NULL;
  *n = 0;
  if (o == Py_None) return 0;
  PyObject* seq = PySequence_Fast(o, "devices must be a sequence of (type, index) tuples");
  if (!seq) return -1;
  const Py_ssize_t len = PySequence_Fast_GET_SIZE(seq);
  dp_device* d = (dp_device*)malloc(sizeof(dp_device) * (size_t)(len > 0 ? len : 1));
  if (!d) {
    Py_DECREF(seq);
    PyErr_NoMemory();
    return -1;
  }
  for (Py_ssize_t i = 0; i < len; ++i) {
    if (dp_py_device(PySequence_Fast_GET_ITEM(seq, i), &d[i]) != 0) {
      free(d);
      Py_DECREF(seq);
      return -1;
    }
  }
  Py_DECREF(seq);
  *out = d;
  *n = (size_t)len;
  return 0;
}

/* n int64 values from a sequence of ints. */
static int dp_py_int64s(PyObject* o, int64_t** out, size_t* n, const char* what) {
  PyObject* seq = PySequence_Fast(o, what);
  if (!seq) return -1;
  const Py_ssize_t len = PySequence_Fast_GET_SIZE(seq);
  int64_t* v = (int64_t*)malloc(sizeof(int64_t) * (size_t)(len > 0 ? len : 1));
  if (!v) {
    Py_DECREF(seq);
    PyErr_NoMemory();
    return -1;
  }
  for (Py_ssize_t i = 0; i < len; ++i) {
    v[i] = PyLong_AsLongLong(PySequence_Fast_GET_ITEM(seq, i));
    if (v[i] == -1 && PyErr_Occurred()) {
      free(v);
      Py_DECREF(seq);
      return -1;
    }
  }
  Py_DECREF(seq);
  *out = v;
  *n = (size_t)len;
  return 0;
}

/* Pointers behind a sequence of proxies of one handle type. */
static int dp_py_handles(PyObject* o, swig_type_info* type, void*** out, size_t* n) {
  PyObject* seq = PySequence_Fast(o, "expected a sequence of handles");
  if (!seq) return -1;
  const Py_ssize_t len = PySequence_Fast_GET_SIZE(seq);
  void** v = (void**)malloc(sizeof(void*) * (size_t)(len > 0 ? len : 1));
  if (!v) {
    Py_DECREF(seq);
    PyErr_NoMemory();
    return -1;
  }
  for (Py_ssize_t i = 0; i < len; ++i) {
    if (!SWIG_IsOK(SWIG_ConvertPtr(PySequence_Fast_GET_ITEM(seq, i), &v[i], type, 0))) {
      PyErr_Format(PyExc_TypeError, "item %zd is not a %s", i, type->str);
      free(v);
      Py_DECREF(seq);
      return -1;
    }
  }
  Py_DECREF(seq);
  *out = v;
  *n = (size_t)len;
  return 0;
}

/* A list of owning proxies for n new references. */
static PyObject* dp_py_handle_list(void** handles, size_t n, swig_type_info* type) {
  PyObject* list = PyList_New((Py_ssize_t)n);
  for (size_t i = 0; i < n; ++i) {
    PyObject* h = SWIG_Python_NewPointerObj(NULL, handles[i], type, SWIG_POINTER_OWN);
    if (list) PyList_SET_ITEM(list, (Py_ssize_t)i, h);
  }
  return list;
}
%}

/* A parameter group as one macro argument (commas inside). */
#define DP_ARGS(X...) X

/* ---- results -------------------------------------------------------------------------- */
%typemap(out) dp_result {
  if ($1 != DP_OK) {
    dp_py_raise($1);
    SWIG_fail;
  }
  /* Work deferred by other threads (the releases of borrowed arrays, mostly) runs here, on
     whichever Python thread calls the library next: left to the main thread's pending
     calls, it waited while the main thread waited (in Thread.join, say). After a success
     only: the work may run Python code that calls the library and changes the message a
     failure is raised with. */
  if (__atomic_load_n(&dp_py_deferred_head, __ATOMIC_ACQUIRE) != NULL) dp_py_run_deferred(NULL);
  $result = SWIG_Py_Void();
}

/* ---- outputs: handles ---- */
%define DP_PY_HANDLE_OUT(TYPE, NAME)
%typemap(in, numinputs=0) TYPE** NAME (TYPE* handle = NULL) { $1 = &handle; }
%typemap(argout) TYPE** NAME {
  PyObject* h = handle$argnum
                    ? SWIG_NewPointerObj(handle$argnum, $descriptor(TYPE*), SWIG_POINTER_OWN)
                    : SWIG_Py_Void();
  $result = SWIG_Python_AppendOutput($result, h);
}
%enddef
DP_PY_HANDLE_OUT(dp_context, out)
DP_PY_HANDLE_OUT(dp_tensor, out)
DP_PY_HANDLE_OUT(dp_tensor, output)
DP_PY_HANDLE_OUT(dp_tensor, tensor)
DP_PY_HANDLE_OUT(dp_module, out)
DP_PY_HANDLE_OUT(dp_optimizer, out)
DP_PY_HANDLE_OUT(dp_data_parallel, out)
DP_PY_HANDLE_OUT(dp_process_group, out)
DP_PY_HANDLE_OUT(dp_ddp, out)

/* ---- outputs: values ---- */
%define DP_PY_VALUE_OUT(CTYPE, NAME, TO_PY)
%typemap(in, numinputs=0) CTYPE* NAME (CTYPE value = (CTYPE)0) { $1 = &value; }
%typemap(argout) CTYPE* NAME { $result = SWIG_Python_AppendOutput($result, TO_PY(value$argnum)); }
%enddef
DP_PY_VALUE_OUT(int32_t, out, PyLong_FromLong)
DP_PY_VALUE_OUT(int32_t, rank, PyLong_FromLong) /* a process group's ranks and sizes */
DP_PY_VALUE_OUT(int32_t, size, PyLong_FromLong)
DP_PY_VALUE_OUT(int64_t, out, PyLong_FromLongLong)
DP_PY_VALUE_OUT(size_t, out, PyLong_FromSize_t)
DP_PY_VALUE_OUT(uint64_t, out, PyLong_FromUnsignedLongLong)
DP_PY_VALUE_OUT(uint64_t, free_bytes, PyLong_FromUnsignedLongLong)
DP_PY_VALUE_OUT(uint64_t, total_bytes, PyLong_FromUnsignedLongLong)
DP_PY_VALUE_OUT(uint64_t, calls, PyLong_FromUnsignedLongLong)
DP_PY_VALUE_OUT(double, out, PyFloat_FromDouble)
DP_PY_VALUE_OUT(int, out, PyBool_FromLong) /* every int* out is a flag */
DP_PY_VALUE_OUT(dp_dtype, out, PyLong_FromLong)
DP_PY_VALUE_OUT(dp_dtype, previous, PyLong_FromLong) /* dp_set_autocast */
DP_PY_VALUE_OUT(void*, out, PyLong_FromVoidPtr)

%typemap(in, numinputs=0) dp_device* out (dp_device value) { $1 = &value; }
%typemap(argout) dp_device* out {
  $result = SWIG_Python_AppendOutput($result, dp_py_from_device(value$argnum));
}

/* Text arguments (paths, names): str (dp_py_text), or None for NULL. */
%typemap(in) const char* {
  $1 = NULL;
  if ($input != Py_None) {
    const char* text = dp_py_text($input, "$1_name");
    if (!text) SWIG_fail;
    $1 = ($1_ltype)text;
  }
}
%typemap(freearg) const char* "" /* the str's own UTF-8, kept by the str */

%typemap(in, numinputs=0) const char** (const char* text = NULL) { $1 = ($1_ltype)&text; }
%typemap(freearg) const char** "" /* owned by the library */
%typemap(argout) const char** {
  PyObject* s = text$argnum ? PyUnicode_FromString(text$argnum) : SWIG_Py_Void();
  $result = SWIG_Python_AppendOutput($result, s);
}

/* Strings the bindings' helpers malloc. */
%typemap(in, numinputs=0) char** out (char* text = NULL) { $1 = &text; }
%typemap(argout) char** out {
  $result = SWIG_Python_AppendOutput($result, PyUnicode_FromString(text$argnum));
}
%typemap(freearg) char** out { free(text$argnum); }

/* The shape: sizes are never negative, so -1 marks the end of what the library wrote. */
%typemap(in, numinputs=0) (int64_t* shape, size_t capacity) (int64_t sizes[DP_MAX_DIMS]) {
  for (int i = 0; i < DP_MAX_DIMS; ++i) sizes[i] = -1;
  $1 = sizes;
  $2 = DP_MAX_DIMS;
}
%typemap(argout) (int64_t* shape, size_t capacity) {
  Py_ssize_t n = 0;
  while (n < DP_MAX_DIMS && sizes$argnum[n] >= 0) ++n;
  PyObject* t = PyTuple_New(n);
  for (Py_ssize_t i = 0; t && i < n; ++i) {
    PyTuple_SET_ITEM(t, i, PyLong_FromLongLong(sizes$argnum[i]));
  }
  $result = SWIG_Python_AppendOutput($result, t);
}

/* Phase times: new structs owned by their proxies. */
%typemap(in, numinputs=0) dp_phase_times* (dp_phase_times times) { $1 = &times; }
%typemap(argout) dp_phase_times* {
  dp_phase_times* copy = (dp_phase_times*)malloc(sizeof(dp_phase_times));
  if (copy) *copy = times$argnum;
  PyObject* p = SWIG_NewPointerObj(copy, $descriptor(dp_phase_times*), SWIG_POINTER_OWN);
  $result = SWIG_Python_AppendOutput($result, p);
}

/* DDP phase times: the same, with struct_size set for the library to read. */
%typemap(in, numinputs=0) dp_ddp_phase_times* (dp_ddp_phase_times ddp_times) {
  ddp_times.struct_size = sizeof ddp_times;
  $1 = &ddp_times;
}
%typemap(argout) dp_ddp_phase_times* {
  dp_ddp_phase_times* copy = (dp_ddp_phase_times*)malloc(sizeof(dp_ddp_phase_times));
  if (copy) *copy = ddp_times$argnum;
  PyObject* p = SWIG_NewPointerObj(copy, $descriptor(dp_ddp_phase_times*), SWIG_POINTER_OWN);
  $result = SWIG_Python_AppendOutput($result, p);
}

/* Several handles at once, into an array on the heap (64 KiB, taken from malloc's free
   lists, not the system, after the first call) that holds more than any call returns in
   practice: 8192 outputs (DP_MAX_OUTPUTS for each of 512 devices, two for each of 4096)
   or devices; more is an error, never a list cut short. */
#define DP_PY_MAX_HANDLES 8192
%define DP_PY_HANDLES_OUT(TYPE, ARRAY, COUNT)
%typemap(in, numinputs=0) (TYPE** ARRAY, size_t capacity, size_t* COUNT)
    (size_t count = 0) {
  $1 = (TYPE**)malloc(DP_PY_MAX_HANDLES * sizeof(TYPE*));
  if (!$1) {
    PyErr_NoMemory();
    SWIG_fail;
  }
  $2 = DP_PY_MAX_HANDLES;
  $3 = &count;
}
%typemap(argout) (TYPE** ARRAY, size_t capacity, size_t* COUNT) {
  PyObject* list = dp_py_handle_list((void**)$1, count$argnum, $descriptor(TYPE*));
  $result = SWIG_Python_AppendOutput($result, list);
}
%typemap(freearg) (TYPE** ARRAY, size_t capacity, size_t* COUNT) { free($1); }
%enddef
DP_PY_HANDLES_OUT(dp_tensor, outputs, n_outputs)
DP_PY_HANDLES_OUT(dp_module, replicas, n_replicas)

%typemap(in, numinputs=0) (dp_device* devices, size_t capacity, size_t* n)
    (size_t count = 0) {
  $1 = (dp_device*)malloc(DP_PY_MAX_HANDLES * sizeof(dp_device));
  if (!$1) {
    PyErr_NoMemory();
    SWIG_fail;
  }
  $2 = DP_PY_MAX_HANDLES;
  $3 = &count;
}
%typemap(argout) (dp_device* devices, size_t capacity, size_t* n) {
  if (count$argnum > DP_PY_MAX_HANDLES) {
    PyErr_Format(PyExc_OverflowError, "%zu devices, more than the %d this binding reads",
                 count$argnum, DP_PY_MAX_HANDLES);
    SWIG_fail;
  }
  PyObject* list = PyList_New((Py_ssize_t)count$argnum);
  for (size_t i = 0; list && i < count$argnum; ++i) {
    PyList_SET_ITEM(list, (Py_ssize_t)i, dp_py_from_device($1[i]));
  }
  $result = SWIG_Python_AppendOutput($result, list);
}
%typemap(freearg) (dp_device* devices, size_t capacity, size_t* n) { free($1); }

/* ---- inputs ---- */
%typemap(in) dp_device {
  if (dp_py_device($input, &$1) != 0) SWIG_fail;
}

%typemap(in) const dp_device* output_device (dp_device device) {
  $1 = NULL;
  if ($input != Py_None) {
    if (dp_py_device($input, &device) != 0) SWIG_fail;
    $1 = &device;
  }
}

/* None is (NULL, 0): every device, for dp_data_parallel_create. */
%typemap(in) (const dp_device* device_ids, size_t n_devices) (dp_device* list = NULL),
             (const dp_device* devices, size_t n_devices) (dp_device* list = NULL) {
  if (dp_py_devices($input, &list, &$2) != 0) SWIG_fail;
  $1 = list;
}
%typemap(freearg) (const dp_device* device_ids, size_t n_devices),
                  (const dp_device* devices, size_t n_devices) { free(list$argnum); }

%define DP_PY_INT64S_IN(PAIR, WHAT)
%typemap(in) PAIR (int64_t* values = NULL) {
  if (dp_py_int64s($input, &values, &$2, WHAT) != 0) SWIG_fail;
  $1 = values;
}
%typemap(freearg) PAIR { free(values$argnum); }
%enddef
DP_PY_INT64S_IN(DP_ARGS((const int64_t* shape, size_t ndim)), "a shape must be a sequence of ints")
DP_PY_INT64S_IN(DP_ARGS((const int64_t* sizes, size_t n)), "sizes must be a sequence of ints")

/* None is (NULL, 0): torch.chunk's equal chunks. */
%typemap(in) (const int64_t* chunk_sizes, size_t n_chunk_sizes) (int64_t* values = NULL) {
  $1 = NULL;
  $2 = 0;
  if ($input != Py_None) {
    if (dp_py_int64s($input, &values, &$2, "chunk_sizes must be a sequence of ints") != 0) {
      SWIG_fail;
    }
    $1 = values;
  }
}
%typemap(freearg) (const int64_t* chunk_sizes, size_t n_chunk_sizes) { free(values$argnum); }

/* None is (NULL, 0): no input is broadcast. */
%typemap(in) (const int* flags, size_t n_flags) (int* flags = NULL) {
  $1 = NULL;
  $2 = 0;
  if ($input != Py_None) {
    PyObject* seq = PySequence_Fast($input, "broadcast must be a sequence of bools or None");
    if (!seq) SWIG_fail;
    const Py_ssize_t len = PySequence_Fast_GET_SIZE(seq);
    flags = (int*)malloc(sizeof(int) * (size_t)(len > 0 ? len : 1));
    int truth = 0;
    for (Py_ssize_t i = 0; flags && i < len && truth >= 0; ++i) {
      truth = PyObject_IsTrue(PySequence_Fast_GET_ITEM(seq, i));
      flags[i] = truth == 1;
    }
    Py_DECREF(seq);
    if (!flags) {
      PyErr_NoMemory();
      SWIG_fail;
    }
    if (truth < 0) SWIG_fail; /* a flag without a truth value: its exception is set */
    $1 = flags;
    $2 = (size_t)len;
  }
}
%typemap(freearg) (const int* flags, size_t n_flags) { free(flags$argnum); }

/* Caller memory through the buffer protocol (C-contiguous; writable for outputs). */
%typemap(in) (const void* data, size_t nbytes) (Py_buffer view, int have = 0),
             (const void* src, size_t src_bytes) (Py_buffer view, int have = 0) {
  if (PyObject_GetBuffer($input, &view, PyBUF_C_CONTIGUOUS) != 0) SWIG_fail;
  have = 1;
  $1 = view.buf;
  $2 = (size_t)view.len;
}
%typemap(in) (void* dst, size_t dst_bytes) (Py_buffer view, int have = 0) {
  if (PyObject_GetBuffer($input, &view, PyBUF_C_CONTIGUOUS | PyBUF_WRITABLE) != 0) SWIG_fail;
  have = 1;
  $1 = view.buf;
  $2 = (size_t)view.len;
}
%typemap(freearg) (const void* data, size_t nbytes), (const void* src, size_t src_bytes),
                  (void* dst, size_t dst_bytes) {
  if (have$argnum) PyBuffer_Release(&view$argnum);
}

/* Sequences of handles. */
%define DP_PY_HANDLES_IN(PAIR, TYPE)
%typemap(in) PAIR (void** list = NULL) {
  if (dp_py_handles($input, $descriptor(TYPE*), &list, &$2) != 0) SWIG_fail;
  $1 = ($1_ltype)list;
}
%typemap(freearg) PAIR { free(list$argnum); }
%enddef
DP_PY_HANDLES_IN(DP_ARGS((dp_tensor* const* inputs, size_t n_inputs)), dp_tensor)
DP_PY_HANDLES_IN(DP_ARGS((dp_tensor* const* tensors, size_t n)), dp_tensor)
DP_PY_HANDLES_IN(DP_ARGS((const dp_tensor* const* tensors, size_t n)), dp_tensor)
DP_PY_HANDLES_IN(DP_ARGS((dp_module* const* replicas, size_t n)), dp_module)

/* Training checkpoint metadata: a dict of str to str, or None. */
%typemap(in) (const dp_metadata_entry* metadata, size_t n_metadata)
    (dp_metadata_entry* entries = NULL) {
  $1 = NULL;
  $2 = 0;
  if ($input != Py_None) {
    if (!PyDict_Check($input)) {
      PyErr_SetString(PyExc_TypeError, "metadata must be a dict of str to str or None");
      SWIG_fail;
    }
    const Py_ssize_t len = PyDict_Size($input);
    entries = (dp_metadata_entry*)malloc(sizeof(dp_metadata_entry) * (size_t)(len > 0 ? len : 1));
    if (!entries) {
      PyErr_NoMemory();
      SWIG_fail;
    }
    Py_ssize_t pos = 0, i = 0;
    PyObject *key, *value;
    while (PyDict_Next($input, &pos, &key, &value)) {
      /* The UTF-8 text stays valid while the dict holds the strings. */
      entries[i].key = dp_py_text(key, "metadata keys and values");
      entries[i].value = entries[i].key ? dp_py_text(value, "metadata keys and values") : NULL;
      if (!entries[i].value) SWIG_fail;
      ++i;
    }
    $1 = entries;
    $2 = (size_t)i;
  }
}
%typemap(freearg) (const dp_metadata_entry* metadata, size_t n_metadata) { free(entries$argnum); }

/* The handles, option structs and shared helpers, wrapped with the typemaps above. */
%include "dataparallel_common.i"

/* ---- DLPack --------------------------------------------------------------------------
   Export: a capsule named "dltensor"; a consumer renames it "used_dltensor" and calls the
   deleter itself. A capsule nobody consumed calls it when it goes away. */
%{
static void dp_py_dlpack_capsule_destructor(PyObject* capsule) {
  if (PyCapsule_IsValid(capsule, "dltensor")) {
    DLManagedTensor* m = (DLManagedTensor*)PyCapsule_GetPointer(capsule, "dltensor");
    if (m && m->deleter) m->deleter(m);
  }
}
%}
%typemap(in, numinputs=0) struct DLManagedTensor** out (struct DLManagedTensor* managed = NULL) {
  $1 = &managed;
}
%typemap(argout) struct DLManagedTensor** out {
  PyObject* capsule = PyCapsule_New(managed$argnum, "dltensor", dp_py_dlpack_capsule_destructor);
  if (!capsule) {
    managed$argnum->deleter(managed$argnum);
    SWIG_fail;
  }
  $result = SWIG_Python_AppendOutput($result, capsule);
}

/* (device_type, device_id) of an unconsumed capsule, for __dlpack_device__. */
%nothread dp_py_dlpack_device;
%inline %{
PyObject* dp_py_dlpack_device(PyObject* capsule) {
  if (!PyCapsule_IsValid(capsule, "dltensor")) {
    PyErr_SetString(PyExc_TypeError, "expected an unconsumed DLPack capsule");
    return NULL;
  }
  DLManagedTensor* m = (DLManagedTensor*)PyCapsule_GetPointer(capsule, "dltensor");
  return Py_BuildValue("(ii)", (int)m->dl_tensor.device.device_type,
                       (int)m->dl_tensor.device.device_id);
}
%}

/* Import: the library gets a copy of the DLManagedTensor whose deleter hands the
   producer's deleter to a thread that holds the GIL (NumPy's takes it, and the library
   may call it from a worker). */
%ignore dp_tensor_from_dlpack;
%rename(dp_tensor_from_dlpack) dp_py_tensor_from_dlpack;
%nothread dp_py_tensor_from_dlpack;
%{
typedef struct dp_py_imported {
  DLManagedTensor managed; /* first: the library sees this */
  DLManagedTensor* producer;
} dp_py_imported;

static void dp_py_call_producer_deleter(void* p) {
  DLManagedTensor* m = (DLManagedTensor*)p;
  if (m->deleter) m->deleter(m);
}

static void dp_py_imported_deleter(DLManagedTensor* self) {
  dp_py_imported* imported = (dp_py_imported*)self;
  DLManagedTensor* producer = imported->producer;
  free(imported);
  dp_py_call_with_gil(dp_py_call_producer_deleter, producer);
}
%}
%inline %{
/* Takes over an unconsumed DLPack capsule ("dltensor"), renaming it "used_dltensor". */
dp_result dp_py_tensor_from_dlpack(dp_context* ctx, PyObject* capsule, dp_tensor** out) {
  if (!PyCapsule_IsValid(capsule, "dltensor")) {
    return dp_set_error(DP_ERR_INVALID_ARGUMENT,
                        "capsule is not an unconsumed DLPack capsule (named \"dltensor\")");
  }
  DLManagedTensor* producer = (DLManagedTensor*)PyCapsule_GetPointer(capsule, "dltensor");
  dp_py_imported* imported = (dp_py_imported*)malloc(sizeof *imported);
  if (!imported) return dp_set_error(DP_ERR_OUT_OF_MEMORY, "from_dlpack: out of memory");
  imported->managed.dl_tensor = producer->dl_tensor;
  imported->managed.manager_ctx = NULL;
  imported->managed.deleter = dp_py_imported_deleter;
  imported->producer = producer;
  dp_result r;
  Py_BEGIN_ALLOW_THREADS
  r = dp_tensor_from_dlpack(ctx, &imported->managed, out);
  Py_END_ALLOW_THREADS
  if (r != DP_OK) {
    free(imported); /* the capsule still owns the producer's tensor */
    return r;
  }
  PyCapsule_SetName(capsule, "used_dltensor");
  return DP_OK;
}
%}

/* ---- borrowing a buffer --------------------------------------------------------------
   The tensor adopts the buffer's memory and holds the buffer (and so its exporter, the
   NumPy array) until the library lets go of the memory. */
%{
static void dp_py_release_buffer(void* p) {
  PyBuffer_Release((Py_buffer*)p);
  free(p);
}

static void dp_py_buffer_deleter(void* view, void* data) {
  (void)data;
  dp_py_call_with_gil(dp_py_release_buffer, view);
}
%}
%nothread dp_py_tensor_borrow;
%inline %{
/* A tensor over `buffer` (writable, C-contiguous, `shape` of `dtype`) on CPU device
   cpu_index, without a copy: writes by either side are seen by the other. */
dp_result dp_py_tensor_borrow(dp_context* ctx, dp_dtype dtype, const int64_t* shape, size_t ndim,
                              PyObject* buffer, int32_t cpu_index, dp_tensor** out) {
  Py_buffer* view = (Py_buffer*)malloc(sizeof(Py_buffer));
  if (!view) return dp_set_error(DP_ERR_OUT_OF_MEMORY, "borrow: out of memory");
  if (PyObject_GetBuffer(buffer, view, PyBUF_C_CONTIGUOUS | PyBUF_WRITABLE) != 0) {
    PyErr_Clear();
    free(view);
    return dp_set_error(DP_ERR_INVALID_ARGUMENT,
                        "borrow: the array must be writable and C-contiguous (copy it instead)");
  }
  dp_result r;
  Py_BEGIN_ALLOW_THREADS
  r = dp_tensor_from_adopted(ctx, dtype, shape, ndim, view->buf, (size_t)view->len, cpu_index,
                             dp_py_buffer_deleter, view, out);
  Py_END_ALLOW_THREADS
  return r; /* on failure the deleter has released the buffer */
}
%}

/* ---- custom modules ------------------------------------------------------------------
   user_data is a Python callable forward(self, inputs) -> list of dp_tensor proxies, or
   a (code, message) tuple for an error. It runs on the worker of the module's device,
   holding the GIL. */
%{
/* Whether the interpreter is going away: a thread that then asks for the GIL is ended on
   the spot (pthread_exit), which would take a library worker's thread with it. */
static int dp_py_finalizing(void) {
#if PY_VERSION_HEX >= 0x030D0000
  return !Py_IsInitialized() || Py_IsFinalizing();
#else
  return !Py_IsInitialized() || _Py_IsFinalizing();
#endif
}

static dp_result dp_py_forward(void* user_data, dp_module* self, dp_tensor* const* inputs,
                               size_t n_inputs, dp_tensor** outputs, size_t max_outputs,
                               size_t* n_outputs) {
  if (dp_py_finalizing()) {
    return dp_set_error(DP_ERR_CALLBACK, "the Python interpreter is shutting down");
  }
  PyGILState_STATE gil = PyGILState_Ensure();
  dp_result r = DP_OK;
  PyObject* result = NULL;
  PyObject* in = PyList_New((Py_ssize_t)n_inputs);
  PyObject* me = SWIG_Python_NewPointerObj(NULL, dp_module_retain(self), SWIGTYPE_p_dp_module,
                                           SWIG_POINTER_OWN);
  if (in && me) {
    for (size_t i = 0; i < n_inputs; ++i) {
      PyObject* t = SWIG_Python_NewPointerObj(NULL, dp_tensor_retain(inputs[i]),
                                              SWIGTYPE_p_dp_tensor, SWIG_POINTER_OWN);
      PyList_SET_ITEM(in, (Py_ssize_t)i, t);
    }
    result = PyObject_CallFunctionObjArgs((PyObject*)user_data, me, in, NULL);
  }
  if (!result) {
    /* The Python side reports errors as a tuple; anything else is a bug there. */
    PyErr_Print();
    r = dp_set_error(DP_ERR_CALLBACK, "the Python forward trampoline failed (traceback on stderr)");
  } else if (PyTuple_Check(result) && PyTuple_GET_SIZE(result) == 2) {
    const long code = PyLong_AsLong(PyTuple_GET_ITEM(result, 0));
    const char* message = PyUnicode_AsUTF8(PyTuple_GET_ITEM(result, 1));
    PyErr_Clear();
    r = dp_set_error(code > DP_OK && code <= DP_ERR_INTERNAL ? (dp_result)code : DP_ERR_CALLBACK,
                     message ? message : "forward failed");
  } else if (!PyList_Check(result) || (size_t)PyList_GET_SIZE(result) > max_outputs) {
    r = dp_bind_error(DP_ERR_CALLBACK, "forward returned more than %zu outputs", max_outputs);
  } else {
    const size_t n = (size_t)PyList_GET_SIZE(result);
    size_t i = 0;
    for (; i < n; ++i) {
      void* t = NULL;
      PyObject* item = PyList_GET_ITEM(result, (Py_ssize_t)i);
      if (!SWIG_IsOK(SWIG_ConvertPtr(item, &t, SWIGTYPE_p_dp_tensor, 0)) || !t) {
        r = dp_bind_error(DP_ERR_CALLBACK, "forward output %zu is not a tensor", i);
        break;
      }
      outputs[i] = dp_tensor_retain((dp_tensor*)t);
    }
    if (r == DP_OK) {
      *n_outputs = n;
    } else {
      while (i > 0) dp_tensor_release(outputs[--i]);
    }
  }
  Py_XDECREF(result);
  Py_XDECREF(in);
  Py_XDECREF(me);
  PyGILState_Release(gil);
  return r;
}

static void dp_py_forward_destroy(void* user_data) {
  dp_py_call_with_gil(dp_py_decref, user_data);
}
%}
%nothread dp_py_module_custom;
%inline %{
/* A custom module named type_name whose forward calls `forward` (see above). */
dp_result dp_py_module_custom(dp_context* ctx, const char* type_name, PyObject* forward,
                              dp_module** out) {
  dp_custom_module_desc desc = DP_CUSTOM_MODULE_DESC_INIT;
  desc.type_name = type_name;
  desc.forward = dp_py_forward;
  desc.user_data = forward;
  desc.destroy = dp_py_forward_destroy;
  Py_INCREF(forward);
  dp_result r = dp_module_custom(ctx, &desc, out);
  if (r != DP_OK) Py_DECREF(forward); /* destroy is not called on failure */
  return r;
}
%}

/* ---- log messages --------------------------------------------------------------------
   Delivered to a Python callable log(level, message) on a thread that holds the GIL. The
   context may log until its last handle goes, which Python cannot see, so the callable is
   kept for the life of the process. */
%{
typedef struct dp_py_log_record {
  PyObject* fn;
  int level;
  char* message;
} dp_py_log_record;

static void dp_py_deliver_log(void* p) {
  dp_py_log_record* rec = (dp_py_log_record*)p;
  PyObject* r = PyObject_CallFunction(rec->fn, "is", rec->level, rec->message);
  if (!r) PyErr_WriteUnraisable(rec->fn);
  Py_XDECREF(r);
  free(rec->message);
  free(rec);
}

static void dp_py_log(void* user_data, dp_log_level level, const char* message) {
  dp_py_log_record* rec = (dp_py_log_record*)malloc(sizeof *rec);
  if (!rec) return;
  rec->fn = (PyObject*)user_data;
  rec->level = (int)level;
  rec->message = strdup(message ? message : "");
  if (!rec->message) {
    free(rec);
    return;
  }
  dp_py_call_with_gil(dp_py_deliver_log, rec);
}
%}
%{
/* The context has ended: its log function's reference goes, always through the queue,
   after the messages queued before it (which use the function without a reference). */
static void dp_py_log_free(void* fn) { dp_py_defer(dp_py_decref, fn); }
%}
%nothread dp_context_options::set_log;
%extend dp_context_options {
  /* Sends log messages to fn(level, message); None: no logging. The options object holds
     one reference to fn, and each context made from it one of its own. */
  void set_log(PyObject* fn) {
    if ($self->log_fn == dp_py_log) Py_DECREF((PyObject*)$self->log_user_data);
    if (fn == Py_None) {
      $self->log_fn = NULL;
      $self->log_user_data = NULL;
      $self->log_user_data_free = NULL;
      return;
    }
    Py_INCREF(fn);
    $self->log_fn = dp_py_log;
    $self->log_user_data = fn;
    $self->log_user_data_free = dp_py_log_free;
  }
  ~dp_context_options() {
    if ($self->log_fn == dp_py_log) dp_py_call_with_gil(dp_py_decref, $self->log_user_data);
    free($self);
  }
}
/* A context made from options with a log function takes its own reference to it (dropped
   by dp_py_log_free when the context ends); a failed create gives it back at once. */
%typemap(in) const dp_context_options* options (int took_log_ref = 0) {
  void* argp = NULL;
  const int res = SWIG_ConvertPtr($input, &argp, $descriptor, 0);
  if (!SWIG_IsOK(res)) {
    SWIG_exception_fail(SWIG_ArgError(res), "in method '$symname', argument $argnum of type '$type'");
  }
  $1 = ($ltype)argp;
  if ($1 && $1->log_fn == dp_py_log) {
    Py_INCREF((PyObject*)$1->log_user_data);
    took_log_ref = 1;
  }
}
%typemap(argout) const dp_context_options* options { took_log_ref$argnum = 0; }
%typemap(freearg) const dp_context_options* options {
  if (took_log_ref$argnum) Py_DECREF((PyObject*)$1->log_user_data);
}

/* Runs the deferred work now (tests use it to make releases deterministic). */
%nothread dp_py_run_pending;
%inline %{
void dp_py_run_pending(void) { dp_py_run_deferred(NULL); }
%}

/* ---- no GIL release for calls that only read metadata ---- */
%nothread dp_version_number;
%nothread dp_version_string;
%nothread dp_result_string;
%nothread dp_last_error;
%nothread dp_dtype_size;
%nothread dp_tensor_dtype;
%nothread dp_tensor_ndim;
%nothread dp_tensor_shape;
%nothread dp_tensor_dim;
%nothread dp_tensor_numel;
%nothread dp_tensor_nbytes;
%nothread dp_tensor_device;
%nothread dp_tensor_version;
%nothread dp_tensor_requires_grad;
%nothread dp_is_grad_enabled;
%nothread dp_set_grad_enabled;
%nothread dp_set_autocast;
%nothread dp_autocast_dtype;
%nothread dp_module_type_name;
%nothread dp_module_is_training;
%nothread dp_optimizer_lr;
%nothread dp_optimizer_set_lr;
%nothread dp_device_count;
%nothread dp_process_group_rank;
%nothread dp_process_group_size;
%nothread dp_process_group_local_rank;
%nothread dp_process_group_local_size;
%nothread dp_ddp_set_grad_sync;
%nothread dp_ddp_set_uneven_inputs;

%include "dataparallel/dataparallel.h"
