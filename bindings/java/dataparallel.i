/* The low-level Java classes (package org.dataparallel.swig; the functions are static
   methods of CApi), generated from the public header. Conventions (the idiomatic layer
   in org.dataparallel builds on them):
   - a dp_result other than DP_OK throws org.dataparallel.DataParallelException with the
     code and dp_last_error()'s message;
   - a function's output parameter is not passed: it is the return value (handles as
     proxies that own their reference, numbers, strings, arrays); which one is decided
     per function in returns.i, generated from the header by java_returns.py;
   - arrays of devices are int[] of (type, index) pairs; shapes and sizes long[]; caller
     memory is a primitive array (copied) or a direct java.nio buffer (used in place);
   - proxies free what they own through a java.lang.ref.Cleaner when unreachable, or at
     once with delete() (once the native calls running with them return); there are no
     finalizers. */
%module CApi

%include <stdint.i>
%include <enumtypeunsafe.swg>
/* 64-bit integers are Java longs (SWIG's C long is 32-bit in Java; and Java has no
   unsigned types, so seeds and counters are longs too). */
%apply long long { int64_t };
%apply long long { uint64_t };
%javaconst(1);

%{
#include <jni.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "dataparallel/dataparallel.h"
%}


/* The JNI library is loaded before the first native call. */
%pragma(java) jniclasscode=%{
  static {
    org.dataparallel.Library.load();
  }
%}

/* ---- proxies: Cleaner instead of finalize ----------------------------------------------- */
%pragma(java) modulecode=%{
  /** Frees native objects whose proxies became unreachable. */
  static final java.lang.ref.Cleaner CLEANER = java.lang.ref.Cleaner.create();

  /**
   * Text for the library: UTF-8 (not JNI's "modified UTF-8", which encodes characters
   * outside the Basic Multilingual Plane, such as emoji in a path, differently), ending in
   * a NUL; null stays null. A NUL inside would end the text early in C, so it is refused.
   */
  static byte[] utf8(String s) {
    if (s == null) return null;
    final int nul = s.indexOf(0);
    if (nul >= 0) {
      throw new IllegalArgumentException("text with a NUL character at index " + nul + ": "
          + s.substring(0, nul) + "...");
    }
    byte[] text = s.getBytes(java.nio.charset.StandardCharsets.UTF_8);
    return java.util.Arrays.copyOf(text, text.length + 1);
  }

  /** utf8() of each string; none may be null. */
  static byte[][] utf8All(String[] strings) {
    if (strings == null) return null;
    byte[][] out = new byte[strings.length][];
    for (int i = 0; i < strings.length; ++i) {
      if (strings[i] == null) {
        throw new IllegalArgumentException("metadata keys and values must not be null");
      }
      out[i] = utf8(strings[i]);
    }
    return out;
  }

  /** What every proxy class is: a native pointer, freed by delete() (idempotent). */
  public interface Pointer {
    long pointer();

    void delete();

    /** The pointer for a native call starting now (0 once deleted): until the matching
        leaveCall(), a delete() from another thread only marks the object, and the last
        call to leave frees it. */
    long enterCall();

    void leaveCall();
  }

  /** enterCall() on each proxy (null ones skipped): their pointers, 0 for null. */
  static long[] pointers(Object[] proxies) {
    if (proxies == null) return null;
    long[] p = new long[proxies.length];
    for (int i = 0; i < proxies.length; ++i) {
      p[i] = proxies[i] == null ? 0 : ((Pointer) proxies[i]).enterCall();
    }
    return p;
  }

  /** ptr, entered from proxy; throws STATE when the proxy was deleted (closed by another
      thread between its owner's check and the call). */
  static long live(long ptr, Object proxy) {
    if (ptr == 0 && proxy != null) {
      throw new org.dataparallel.DataParallelException(org.dataparallel.ErrorCode.STATE,
          "the " + proxy.getClass().getSimpleName().replaceFirst("^dp_", "").replace('_', ' ')
          + " was closed by another thread");
    }
    return ptr;
  }

  /** live() of each of ptrs, entered from proxies by pointers(). */
  static long[] liveAll(long[] ptrs, Object[] proxies) {
    for (int i = 0; ptrs != null && i < ptrs.length; ++i) live(ptrs[i], proxies[i]);
    return ptrs;
  }

  /** leaveCall() on each proxy that pointers() entered. */
  static void leaveAll(Object[] proxies) {
    if (proxies == null) return;
    for (Object p : proxies) {
      if (p != null) ((Pointer) p).leaveCall();
    }
  }
%}

%typemap(javafinalize) SWIGTYPE ""
%typemap(javainterfaces) SWIGTYPE "CApi.Pointer"
%typemap(javabody) SWIGTYPE %{
  private transient long swigCPtr;
  private transient java.lang.ref.Cleaner.Cleanable cleanable;

  protected $javaclassname(long cPtr, boolean cMemoryOwn) {
    swigCPtr = cPtr;
    if (cMemoryOwn && cPtr != 0) {
      final long owned = cPtr;
      cleanable = CApi.CLEANER.register(this, () -> $imclassname.delete_$javaclassname(owned));
    }
  }

  public static long getCPtr($javaclassname obj) {
    return (obj == null) ? 0 : obj.swigCPtr;
  }

  /** The native pointer; 0 after delete(). */
  public long pointer() {
    return swigCPtr;
  }

  // Native calls running with this object's pointer (a close() on another thread must not
  // free it under them), and whether a delete() waits for them.
  private transient int callsInFlight;
  private transient boolean deletePending;

  public synchronized long enterCall() {
    ++callsInFlight;
    return swigCPtr;
  }

  public synchronized void leaveCall() {
    if (--callsInFlight == 0 && deletePending) {
      deletePending = false;
      free();
    }
  }

  /** enterCall() of obj, or 0 for null. */
  public static long enter($javaclassname obj) {
    return obj == null ? 0 : obj.enterCall();
  }

  /** leaveCall() of obj, unless null. */
  public static void leave($javaclassname obj) {
    if (obj != null) obj.leaveCall();
  }

  private void free() {
    if (cleanable != null) {
      cleanable.clean();
      cleanable = null;
    }
  }
%}
%typemap(javadestruct, methodname="delete", methodmodifiers="public synchronized") SWIGTYPE {
    swigCPtr = 0;  // calls that start from now on get 0, which the library refuses
    if (callsInFlight > 0) {
      deletePending = true;
    } else {
      free();
    }
  }

/* A handle argument is entered for the call and left in its finally block, so that a
   delete() from another thread meanwhile waits for the call (the library would otherwise
   free the handle under it). enter() cannot throw, so every argument entered is left; a
   proxy deleted before it was entered throws STATE inside the try block (CApi.live). */
%typemap(javain, pre="    final long swigPtr_$javainput = $javaclassname.enter($javainput);",
         post="      $javaclassname.leave($javainput);") SWIGTYPE *, SWIGTYPE &
    "CApi.live(swigPtr_$javainput, $javainput)"

/* A struct by value (a dp_device) must not be null: checked in Java, before the native
   call, where SWIG's own check would return early without freeing the arguments already
   converted (a copied data array, say). */
%typemap(javain, pre="    java.util.Objects.requireNonNull($javainput, \"$1_name\");") SWIGTYPE
    "$&javaclassname.getCPtr($javainput)"

/* ---- errors ------------------------------------------------------------------------------ */
%{
/* A Java String from the library's UTF-8 text (NewStringUTF would read it as modified
   UTF-8 and garble characters outside the Basic Multilingual Plane). NULL with an
   exception pending on failure. */
static jstring dp_java_string(JNIEnv* jenv, const char* text) {
  const jsize len = (jsize)strlen(text);
  jbyteArray bytes = (*jenv)->NewByteArray(jenv, len);
  if (!bytes) return NULL;
  (*jenv)->SetByteArrayRegion(jenv, bytes, 0, len, (const jbyte*)text);
  jclass cls = (*jenv)->FindClass(jenv, "java/lang/String");
  jmethodID ctor = cls ? (*jenv)->GetMethodID(jenv, cls, "<init>", "([BLjava/lang/String;)V") : NULL;
  jstring charset = ctor ? (*jenv)->NewStringUTF(jenv, "UTF-8") : NULL;
  jstring s = charset ? (jstring)(*jenv)->NewObject(jenv, cls, ctor, bytes, charset) : NULL;
  (*jenv)->DeleteLocalRef(jenv, bytes);
  if (charset) (*jenv)->DeleteLocalRef(jenv, charset);
  if (cls) (*jenv)->DeleteLocalRef(jenv, cls);
  return s;
}

static void dp_java_throw(JNIEnv* jenv, dp_result code) {
  jclass cls = (*jenv)->FindClass(jenv, "org/dataparallel/DataParallelException");
  if (!cls) return; /* NoClassDefFoundError is pending */
  jmethodID ctor = (*jenv)->GetMethodID(jenv, cls, "<init>", "(ILjava/lang/String;)V");
  jstring message = ctor ? dp_java_string(jenv, dp_last_error()) : NULL;
  if (ctor && message) {
    jobject exc = (*jenv)->NewObject(jenv, cls, ctor, (jint)code, message);
    if (exc) (*jenv)->Throw(jenv, (jthrowable)exc);
  }
}

static void dp_java_throw_illegal(JNIEnv* jenv, const char* message) {
  jclass cls = (*jenv)->FindClass(jenv, "java/lang/IllegalArgumentException");
  if (cls) (*jenv)->ThrowNew(jenv, cls, message);
}

/* Whether output typemaps may build Java objects (no exception pending). */
#define DP_JAVA_OK(jenv) (!(*(jenv))->ExceptionCheck(jenv))
%}

/* A parameter group as one macro argument (commas inside). */
#define DP_ARGS(X...) X

/* Every function that returns a dp_result throws on failure; what it returns in Java is
   set per function (returns.i): void, or its output. */
%typemap(out) dp_result {
  if ($1 != DP_OK) dp_java_throw(jenv, $1);
}

/* Per-function return types (returns.i applies them). */
%define DP_JAVA_RETURN_VOID(FUNC)
%typemap(jni) dp_result FUNC "void"
%typemap(jtype) dp_result FUNC "void"
%typemap(jstype) dp_result FUNC "void"
%typemap(javaout) dp_result FUNC { $jnicall; }
%enddef
%define DP_JAVA_RETURN_VALUE(FUNC, JNI, JTYPE)
%typemap(jni) dp_result FUNC #JNI
%typemap(jtype) dp_result FUNC #JTYPE
%typemap(jstype) dp_result FUNC #JTYPE
%typemap(javaout) dp_result FUNC { return $jnicall; }
%enddef
/* A handle: a proxy owning the reference, or null (dp_tensor_grad without a gradient). */
%define DP_JAVA_RETURN_HANDLE(FUNC, TYPE)
%typemap(jni) dp_result FUNC "jlong"
%typemap(jtype) dp_result FUNC "long"
%typemap(jstype) dp_result FUNC #TYPE
%typemap(javaout) dp_result FUNC {
    long cPtr = $jnicall;
    return cPtr == 0 ? null : new TYPE(cPtr, true);
  }
%enddef
%define DP_JAVA_RETURN_HANDLES(FUNC, TYPE)
%typemap(jni) dp_result FUNC "jlongArray"
%typemap(jtype) dp_result FUNC "long[]"
%typemap(jstype) dp_result FUNC "TYPE[]"
%typemap(javaout) dp_result FUNC {
    long[] p = $jnicall;
    TYPE[] handles = new TYPE[p.length];
    for (int i = 0; i < p.length; ++i) handles[i] = new TYPE(p[i], true);
    return handles;
  }
%enddef

/* ---- outputs ----------------------------------------------------------------------------- */
%define DP_JAVA_HANDLE_OUT(TYPE, NAME)
%typemap(in, numinputs=0) TYPE** NAME (TYPE* handle = NULL) { $1 = &handle; }
%typemap(argout) TYPE** NAME { jresult = (jlong)(intptr_t)handle$argnum; }
%enddef
DP_JAVA_HANDLE_OUT(dp_context, out)
DP_JAVA_HANDLE_OUT(dp_tensor, out)
DP_JAVA_HANDLE_OUT(dp_tensor, output)
DP_JAVA_HANDLE_OUT(dp_tensor, tensor)
DP_JAVA_HANDLE_OUT(dp_module, out)
DP_JAVA_HANDLE_OUT(dp_optimizer, out)
DP_JAVA_HANDLE_OUT(dp_data_parallel, out)
DP_JAVA_HANDLE_OUT(dp_process_group, out)
DP_JAVA_HANDLE_OUT(dp_ddp, out)

%define DP_JAVA_VALUE_OUT(CTYPE, NAME, JNI)
%typemap(in, numinputs=0) CTYPE* NAME (CTYPE value = (CTYPE)0) { $1 = ($1_ltype)&value; }
%typemap(argout) CTYPE* NAME { jresult = (JNI)value$argnum; }
%enddef
DP_JAVA_VALUE_OUT(int32_t, out, jint)
DP_JAVA_VALUE_OUT(int32_t, rank, jint) /* a process group's ranks and sizes */
DP_JAVA_VALUE_OUT(int32_t, size, jint)
DP_JAVA_VALUE_OUT(int64_t, out, jlong)
DP_JAVA_VALUE_OUT(size_t, out, jlong)
DP_JAVA_VALUE_OUT(uint64_t, out, jlong)
DP_JAVA_VALUE_OUT(uint64_t, calls, jlong)
DP_JAVA_VALUE_OUT(double, out, jdouble)
DP_JAVA_VALUE_OUT(dp_dtype, out, jint)
DP_JAVA_VALUE_OUT(dp_dtype, previous, jint) /* dp_set_autocast */
%typemap(in, numinputs=0) int* out (int value = 0) { $1 = &value; }
%typemap(argout) int* out { jresult = value$argnum ? JNI_TRUE : JNI_FALSE; }
%typemap(in, numinputs=0) void** out (void* value = NULL) { $1 = &value; }
%typemap(argout) void** out { jresult = (jlong)(intptr_t)value$argnum; }

/* A device: a new dp_device struct owned by its proxy. */
%typemap(in, numinputs=0) dp_device* out (dp_device value) { $1 = &value; }
%typemap(argout) dp_device* out {
  if (DP_JAVA_OK(jenv)) { /* after a failure nobody would own the copy */
    dp_device* copy = (dp_device*)malloc(sizeof(dp_device));
    if (copy) *copy = value$argnum;
    jresult = (jlong)(intptr_t)copy;
  }
}

%typemap(in, numinputs=0) const char** out (const char* text = NULL) { $1 = ($1_ltype)&text; }
%typemap(freearg) const char** out "" /* owned by the library */
%typemap(argout) const char** out {
  if (text$argnum && DP_JAVA_OK(jenv)) jresult = dp_java_string(jenv, text$argnum);
}
%typemap(in, numinputs=0) char** out (char* text = NULL) { $1 = &text; }
%typemap(argout) char** out {
  if (text$argnum && DP_JAVA_OK(jenv)) jresult = dp_java_string(jenv, text$argnum);
}

/* Text returned (dp_last_error, dp_result_string, dp_version_string): a String. */
%define DP_JAVA_TEXT_RETURN(FUNC)
%typemap(jni) const char* FUNC "jstring"
%typemap(jtype) const char* FUNC "String"
%typemap(jstype) const char* FUNC "String"
%typemap(javaout) const char* FUNC { return $jnicall; }
%typemap(out) const char* FUNC {
  if ($1) $result = dp_java_string(jenv, $1);
}
%enddef
DP_JAVA_TEXT_RETURN(dp_last_error)
DP_JAVA_TEXT_RETURN(dp_result_string)
DP_JAVA_TEXT_RETURN(dp_version_string)
/* Metadata goes as String[] pairs (below), not as entry structs. */
%ignore dp_metadata_entry;

/* Text arguments: byte[] from CApi.utf8 (UTF-8, NUL-terminated; null is NULL). */
%typemap(jni) const char* "jbyteArray"
%typemap(jtype) const char* "byte[]"
%typemap(jstype) const char* "String"
%typemap(javain) const char* "CApi.utf8($javainput)"
%typemap(in) const char* (jbyte* text = NULL) {
  $1 = NULL;
  if ($input) {
    text = (*jenv)->GetByteArrayElements(jenv, $input, NULL);
    if (!text) return $null; /* OutOfMemoryError pending */
    $1 = ($1_ltype)text;
  }
}
%typemap(freearg) const char* {
  if (text$argnum) (*jenv)->ReleaseByteArrayElements(jenv, $input, text$argnum, JNI_ABORT);
}
%typemap(freearg) char** out { free(text$argnum); }

/* A second output: the name of a parameter or buffer, in name[0] (name may be null). */
%typemap(jni) const char** name "jobjectArray"
%typemap(jtype) const char** name "String[]"
%typemap(jstype) const char** name "String[]"
%typemap(javain) const char** name "$javainput"
%typemap(in) const char** name (const char* text = NULL) { $1 = ($1_ltype)&text; }
%typemap(freearg) const char** name ""
%typemap(argout) const char** name {
  if ($input && text$argnum && DP_JAVA_OK(jenv) && (*jenv)->GetArrayLength(jenv, $input) > 0) {
    jstring s = dp_java_string(jenv, text$argnum);
    if (s) (*jenv)->SetObjectArrayElement(jenv, $input, 0, s);
  }
}

/* Free and total bytes as {free, total}. */
%typemap(in, numinputs=0) (uint64_t* free_bytes, uint64_t* total_bytes)
    (uint64_t free_b = 0, uint64_t total_b = 0) {
  $1 = &free_b;
  $2 = &total_b;
}
%typemap(argout) (uint64_t* free_bytes, uint64_t* total_bytes) {
  if (DP_JAVA_OK(jenv)) {
    jlong v[2] = {(jlong)free_b$argnum, (jlong)total_b$argnum};
    jresult = (*jenv)->NewLongArray(jenv, 2);
    if (jresult) (*jenv)->SetLongArrayRegion(jenv, jresult, 0, 2, v);
  }
}

/* The shape: sizes are never negative, so -1 marks the end of what the library wrote. */
%typemap(in, numinputs=0) (int64_t* shape, size_t capacity) (int64_t sizes[DP_MAX_DIMS]) {
  for (int i = 0; i < DP_MAX_DIMS; ++i) sizes[i] = -1;
  $1 = ($1_ltype)sizes;
  $2 = DP_MAX_DIMS;
}
%typemap(argout) (int64_t* shape, size_t capacity) {
  if (DP_JAVA_OK(jenv)) {
    jsize n = 0;
    jlong v[DP_MAX_DIMS];
    while (n < DP_MAX_DIMS && sizes$argnum[n] >= 0) {
      v[n] = (jlong)sizes$argnum[n];
      ++n;
    }
    jresult = (*jenv)->NewLongArray(jenv, n);
    if (jresult) (*jenv)->SetLongArrayRegion(jenv, jresult, 0, n, v);
  }
}

/* Several handles at once, into an array on the stack (64 KiB: a wrapper returns early on a
   bad argument, without its freearg code, so no heap) that holds more than any call
   returns in practice: 8192 outputs (DP_MAX_OUTPUTS for each of 512 devices, two for each
   of 4096) or devices; more is an error, never a list cut short. The Java arrays are
   copied from a heap buffer made and freed in the argout code. */
#define DP_JAVA_MAX_HANDLES 8192
%{
static void dp_java_throw_state(JNIEnv* jenv, const char* message) {
  jclass cls = (*jenv)->FindClass(jenv, "java/lang/IllegalStateException");
  if (cls) (*jenv)->ThrowNew(jenv, cls, message);
}
%}
%define DP_JAVA_HANDLES_OUT(TYPE, ARRAY, COUNT)
%typemap(in, numinputs=0) (TYPE** ARRAY, size_t capacity, size_t* COUNT)
    (TYPE* handles[DP_JAVA_MAX_HANDLES], size_t count = 0) {
  $1 = handles;
  $2 = DP_JAVA_MAX_HANDLES;
  $3 = &count;
}
%typemap(argout) (TYPE** ARRAY, size_t capacity, size_t* COUNT) {
  jlong* v = DP_JAVA_OK(jenv) ? (jlong*)malloc((count$argnum + 1) * sizeof(jlong)) : NULL;
  if (v) {
    for (size_t i = 0; i < count$argnum; ++i) v[i] = (jlong)(intptr_t)$1[i];
    jresult = (*jenv)->NewLongArray(jenv, (jsize)count$argnum);
    if (jresult) (*jenv)->SetLongArrayRegion(jenv, jresult, 0, (jsize)count$argnum, v);
    free(v);
  } else if (DP_JAVA_OK(jenv)) {
    dp_java_throw_state(jenv, "no memory for the handles of a call");
  }
}
%enddef
DP_JAVA_HANDLES_OUT(dp_tensor, outputs, n_outputs)
DP_JAVA_HANDLES_OUT(dp_module, replicas, n_replicas)

/* Devices as (type, index) pairs. */
%typemap(in, numinputs=0) (dp_device* devices, size_t capacity, size_t* n)
    (dp_device devices[DP_JAVA_MAX_HANDLES], size_t count = 0) {
  $1 = devices;
  $2 = DP_JAVA_MAX_HANDLES;
  $3 = &count;
}
%typemap(argout) (dp_device* devices, size_t capacity, size_t* n) {
  if (DP_JAVA_OK(jenv) && count$argnum > DP_JAVA_MAX_HANDLES) {
    char message[96];
    snprintf(message, sizeof message, "%zu devices, more than the %d this binding reads",
             count$argnum, DP_JAVA_MAX_HANDLES);
    dp_java_throw_state(jenv, message);
  }
  jint* v = DP_JAVA_OK(jenv) ? (jint*)malloc((2 * count$argnum + 1) * sizeof(jint)) : NULL;
  if (v) {
    for (size_t i = 0; i < count$argnum; ++i) {
      v[2 * i] = (jint)$1[i].type;
      v[2 * i + 1] = (jint)$1[i].index;
    }
    jresult = (*jenv)->NewIntArray(jenv, (jsize)(2 * count$argnum));
    if (jresult) (*jenv)->SetIntArrayRegion(jenv, jresult, 0, (jsize)(2 * count$argnum), v);
    free(v);
  } else if (DP_JAVA_OK(jenv)) {
    dp_java_throw_state(jenv, "no memory for a device list");
  }
}

/* ---- inputs ------------------------------------------------------------------------------ */
%{
/* n devices from (type, index) pairs; null is (NULL, 0). */
static int dp_java_devices(JNIEnv* jenv, jintArray pairs, dp_device** out, size_t* n) {
  *out = NULL;
  *n = 0;
  if (!pairs) return 0;
  const jsize len = (*jenv)->GetArrayLength(jenv, pairs);
  if (len % 2 != 0) {
    dp_java_throw_illegal(jenv, "devices must be (type, index) pairs: the length must be even");
    return -1;
  }
  jint* v = (jint*)malloc(sizeof(jint) * (size_t)(len > 0 ? len : 1));
  dp_device* d = (dp_device*)malloc(sizeof(dp_device) * (size_t)(len / 2 > 0 ? len / 2 : 1));
  if (!v || !d) {
    free(v);
    free(d);
    dp_java_throw_illegal(jenv, "out of memory");
    return -1;
  }
  (*jenv)->GetIntArrayRegion(jenv, pairs, 0, len, v);
  for (jsize i = 0; i < len / 2; ++i) {
    d[i].type = (dp_device_type)v[2 * i];
    d[i].index = v[2 * i + 1];
  }
  free(v);
  *out = d;
  *n = (size_t)(len / 2);
  return 0;
}

/* A copy of a long[]; null is (NULL, 0). */
static int dp_java_int64s(JNIEnv* jenv, jlongArray a, int64_t** out, size_t* n) {
  *out = NULL;
  *n = 0;
  if (!a) return 0;
  const jsize len = (*jenv)->GetArrayLength(jenv, a);
  int64_t* v = (int64_t*)malloc(sizeof(int64_t) * (size_t)(len > 0 ? len : 1));
  if (!v) {
    dp_java_throw_illegal(jenv, "out of memory");
    return -1;
  }
  (*jenv)->GetLongArrayRegion(jenv, a, 0, len, (jlong*)v);
  *out = v;
  *n = (size_t)len;
  return 0;
}

/* Caller memory: a direct buffer in place, or a primitive array through a copy (so the
   library never runs inside a JNI critical region). */
typedef struct dp_java_memory {
  void* data;
  size_t size;
  jarray array; /* the array copied from/to, or NULL */
  void* copy;
} dp_java_memory;

static int dp_java_memory_get(JNIEnv* jenv, jobject o, int copy_in, dp_java_memory* m) {
  static const struct {
    const char* array_class;
    const char* buffer_class;
    size_t size;
  } kinds[] = {{"[F", "java/nio/FloatBuffer", 4}, {"[D", "java/nio/DoubleBuffer", 8},
               {"[J", "java/nio/LongBuffer", 8},  {"[I", "java/nio/IntBuffer", 4},
               {"[S", "java/nio/ShortBuffer", 2}, /* bfloat16 bits */
               {"[B", "java/nio/ByteBuffer", 1}};
  memset(m, 0, sizeof *m);
  if (!o) return 0; /* the library names the NULL */
  for (size_t k = 0; k < sizeof kinds / sizeof kinds[0]; ++k) {
    jclass array_class = (*jenv)->FindClass(jenv, kinds[k].array_class);
    if (array_class && (*jenv)->IsInstanceOf(jenv, o, array_class)) {
      m->array = (jarray)o;
      const jsize len = (*jenv)->GetArrayLength(jenv, m->array);
      m->size = (size_t)len * kinds[k].size;
      m->copy = malloc(m->size > 0 ? m->size : 1);
      if (!m->copy) {
        dp_java_throw_illegal(jenv, "out of memory");
        return -1;
      }
      if (copy_in) {
        void* c = m->copy;
        switch (kinds[k].array_class[1]) {
          case 'F': (*jenv)->GetFloatArrayRegion(jenv, (jfloatArray)o, 0, len, (jfloat*)c); break;
          case 'D':
            (*jenv)->GetDoubleArrayRegion(jenv, (jdoubleArray)o, 0, len, (jdouble*)c);
            break;
          case 'J': (*jenv)->GetLongArrayRegion(jenv, (jlongArray)o, 0, len, (jlong*)c); break;
          case 'I': (*jenv)->GetIntArrayRegion(jenv, (jintArray)o, 0, len, (jint*)c); break;
          case 'S': (*jenv)->GetShortArrayRegion(jenv, (jshortArray)o, 0, len, (jshort*)c); break;
          default: (*jenv)->GetByteArrayRegion(jenv, (jbyteArray)o, 0, len, (jbyte*)c); break;
        }
      }
      m->data = m->copy;
      return 0;
    }
    jclass buffer_class = (*jenv)->FindClass(jenv, kinds[k].buffer_class);
    if (buffer_class && (*jenv)->IsInstanceOf(jenv, o, buffer_class)) {
      m->data = (*jenv)->GetDirectBufferAddress(jenv, o);
      if (!m->data) {
        dp_java_throw_illegal(jenv, "the buffer must be direct (ByteBuffer.allocateDirect)");
        return -1;
      }
      m->size = (size_t)(*jenv)->GetDirectBufferCapacity(jenv, o) * kinds[k].size;
      return 0;
    }
  }
  dp_java_throw_illegal(jenv, "memory must be a float[], double[], long[], int[], short[] or "
                              "byte[], or a direct buffer of those types");
  return -1;
}

/* Copies an array back (copy_out) and frees the copy. */
static void dp_java_memory_release(JNIEnv* jenv, dp_java_memory* m, int copy_out) {
  if (m->array && m->copy && copy_out && DP_JAVA_OK(jenv)) {
    const jsize len = (*jenv)->GetArrayLength(jenv, m->array);
    jclass f = (*jenv)->FindClass(jenv, "[F");
    jclass d = (*jenv)->FindClass(jenv, "[D");
    jclass j = (*jenv)->FindClass(jenv, "[J");
    jclass i = (*jenv)->FindClass(jenv, "[I");
    jclass s = (*jenv)->FindClass(jenv, "[S");
    if ((*jenv)->IsInstanceOf(jenv, m->array, f)) {
      (*jenv)->SetFloatArrayRegion(jenv, (jfloatArray)m->array, 0, len, (const jfloat*)m->copy);
    } else if ((*jenv)->IsInstanceOf(jenv, m->array, d)) {
      (*jenv)->SetDoubleArrayRegion(jenv, (jdoubleArray)m->array, 0, len, (const jdouble*)m->copy);
    } else if ((*jenv)->IsInstanceOf(jenv, m->array, j)) {
      (*jenv)->SetLongArrayRegion(jenv, (jlongArray)m->array, 0, len, (const jlong*)m->copy);
    } else if ((*jenv)->IsInstanceOf(jenv, m->array, i)) {
      (*jenv)->SetIntArrayRegion(jenv, (jintArray)m->array, 0, len, (const jint*)m->copy);
    } else if ((*jenv)->IsInstanceOf(jenv, m->array, s)) {
      (*jenv)->SetShortArrayRegion(jenv, (jshortArray)m->array, 0, len, (const jshort*)m->copy);
    } else {
      (*jenv)->SetByteArrayRegion(jenv, (jbyteArray)m->array, 0, len, (const jbyte*)m->copy);
    }
  }
  free(m->copy);
  m->copy = NULL;
}

/* Pointers from a long[] of proxies' pointers. */
static int dp_java_pointers(JNIEnv* jenv, jlongArray a, void*** out, size_t* n) {
  *out = NULL;
  *n = 0;
  if (!a) return 0;
  const jsize len = (*jenv)->GetArrayLength(jenv, a);
  jlong* v = (jlong*)malloc(sizeof(jlong) * (size_t)(len > 0 ? len : 1));
  void** p = (void**)malloc(sizeof(void*) * (size_t)(len > 0 ? len : 1));
  if (!v || !p) {
    free(v);
    free(p);
    dp_java_throw_illegal(jenv, "out of memory");
    return -1;
  }
  (*jenv)->GetLongArrayRegion(jenv, a, 0, len, v);
  for (jsize i = 0; i < len; ++i) p[i] = (void*)(intptr_t)v[i];
  free(v);
  *out = p;
  *n = (size_t)len;
  return 0;
}
%}

/* Device lists: int[] of (type, index) pairs; null means every device where the C API
   allows NULL. */
%typemap(jni) (const dp_device* device_ids, size_t n_devices),
               (const dp_device* devices, size_t n_devices) "jintArray"
%typemap(jtype) (const dp_device* device_ids, size_t n_devices),
                (const dp_device* devices, size_t n_devices) "int[]"
%typemap(jstype) (const dp_device* device_ids, size_t n_devices),
                 (const dp_device* devices, size_t n_devices) "int[]"
%typemap(javain) (const dp_device* device_ids, size_t n_devices),
                 (const dp_device* devices, size_t n_devices) "$javainput"
%typemap(in) (const dp_device* device_ids, size_t n_devices) (dp_device* list = NULL),
             (const dp_device* devices, size_t n_devices) (dp_device* list = NULL) {
  if (dp_java_devices(jenv, $input, &list, &$2) != 0) return $null;
  $1 = list;
}
%typemap(freearg) (const dp_device* device_ids, size_t n_devices),
                  (const dp_device* devices, size_t n_devices) { free(list$argnum); }

/* int64 lists: long[] (null is (NULL, 0)). */
%define DP_JAVA_INT64S_IN(PAIR)
%typemap(jni) PAIR "jlongArray"
%typemap(jtype) PAIR "long[]"
%typemap(jstype) PAIR "long[]"
%typemap(javain) PAIR "$javainput"
%typemap(in) PAIR (int64_t* values = NULL) {
  if (dp_java_int64s(jenv, $input, &values, &$2) != 0) return $null;
  $1 = ($1_ltype)values;
}
%typemap(freearg) PAIR { free(values$argnum); }
%enddef
DP_JAVA_INT64S_IN(DP_ARGS((const int64_t* shape, size_t ndim)))
DP_JAVA_INT64S_IN(DP_ARGS((const int64_t* sizes, size_t n)))
DP_JAVA_INT64S_IN(DP_ARGS((const int64_t* chunk_sizes, size_t n_chunk_sizes)))

/* Broadcast flags: boolean[] or null. */
%typemap(jni) (const int* flags, size_t n_flags) "jbooleanArray"
%typemap(jtype) (const int* flags, size_t n_flags) "boolean[]"
%typemap(jstype) (const int* flags, size_t n_flags) "boolean[]"
%typemap(javain) (const int* flags, size_t n_flags) "$javainput"
%typemap(in) (const int* flags, size_t n_flags) (int* flags = NULL) {
  $1 = NULL;
  $2 = 0;
  if ($input) {
    const jsize len = (*jenv)->GetArrayLength(jenv, $input);
    jboolean* b = (jboolean*)malloc((size_t)(len > 0 ? len : 1));
    flags = (int*)malloc(sizeof(int) * (size_t)(len > 0 ? len : 1));
    if (b && flags) {
      (*jenv)->GetBooleanArrayRegion(jenv, $input, 0, len, b);
      for (jsize i = 0; i < len; ++i) flags[i] = b[i] ? 1 : 0;
    }
    free(b);
    $1 = flags;
    $2 = (size_t)len;
  }
}
%typemap(freearg) (const int* flags, size_t n_flags) { free(flags$argnum); }

/* Caller memory: Object (primitive array or direct buffer). */
%define DP_JAVA_MEMORY_IN(PAIR, COPY_IN, COPY_OUT)
%typemap(jni) PAIR "jobject"
%typemap(jtype) PAIR "Object"
%typemap(jstype) PAIR "Object"
%typemap(javain) PAIR "$javainput"
%typemap(in) PAIR (dp_java_memory memory) {
  if (dp_java_memory_get(jenv, $input, COPY_IN, &memory) != 0) return $null;
  $1 = memory.data;
  $2 = memory.size;
}
%typemap(freearg) PAIR { dp_java_memory_release(jenv, &memory$argnum, COPY_OUT); }
%enddef
DP_JAVA_MEMORY_IN(DP_ARGS((const void* data, size_t nbytes)), 1, 0)
DP_JAVA_MEMORY_IN(DP_ARGS((const void* src, size_t src_bytes)), 1, 0)
DP_JAVA_MEMORY_IN(DP_ARGS((void* dst, size_t dst_bytes)), 0, 1)

/* Arrays of handles: proxy arrays, passed as their pointers, each proxy entered for the
   call and left after it as a single handle argument is (a copy of the array is taken
   first, so that a change to the caller's array meanwhile cannot unbalance them). */
%define DP_JAVA_HANDLES_IN(PAIR, TYPE)
%typemap(jni) PAIR "jlongArray"
%typemap(jtype) PAIR "long[]"
%typemap(jstype) PAIR "TYPE[]"
%typemap(javain,
         pre="    final Object[] swigIn_$javainput = $javainput == null ? null : $javainput.clone();\n"
             "    final long[] swigPtrs_$javainput = CApi.pointers(swigIn_$javainput);",
         post="      CApi.leaveAll(swigIn_$javainput);") PAIR
    "CApi.liveAll(swigPtrs_$javainput, swigIn_$javainput)"
%typemap(in) PAIR (void** list = NULL) {
  if (dp_java_pointers(jenv, $input, &list, &$2) != 0) return $null;
  $1 = ($1_ltype)list;
}
%typemap(freearg) PAIR { free(list$argnum); }
%enddef
DP_JAVA_HANDLES_IN(DP_ARGS((dp_tensor* const* inputs, size_t n_inputs)), dp_tensor)
DP_JAVA_HANDLES_IN(DP_ARGS((dp_tensor* const* tensors, size_t n)), dp_tensor)
DP_JAVA_HANDLES_IN(DP_ARGS((const dp_tensor* const* tensors, size_t n)), dp_tensor)
DP_JAVA_HANDLES_IN(DP_ARGS((dp_module* const* replicas, size_t n)), dp_module)

/* Checkpoint metadata: String[] of key, value pairs (null for none), as UTF-8 byte[]s
   (CApi.utf8All, which refuses null strings before the call). */
%{
typedef struct dp_java_metadata {
  dp_metadata_entry* entries;
  jbyteArray* arrays;
  jbyte** texts;
  jsize count;
} dp_java_metadata;

static void dp_java_metadata_release(JNIEnv* jenv, dp_java_metadata* m) {
  for (jsize i = 0; m->arrays && m->texts && i < m->count; ++i) {
    if (m->texts[i]) (*jenv)->ReleaseByteArrayElements(jenv, m->arrays[i], m->texts[i], JNI_ABORT);
    if (m->arrays[i]) (*jenv)->DeleteLocalRef(jenv, m->arrays[i]);
  }
  free(m->entries);
  free(m->arrays);
  free(m->texts);
  memset(m, 0, sizeof *m);
}

/* 0, or -1 with an exception pending and nothing held. */
static int dp_java_metadata_get(JNIEnv* jenv, jobjectArray pairs, dp_java_metadata* m) {
  memset(m, 0, sizeof *m);
  if (!pairs) return 0;
  const jsize count = (*jenv)->GetArrayLength(jenv, pairs);
  if (count % 2 != 0) {
    dp_java_throw_illegal(jenv, "metadata must be key, value pairs: the length must be even");
    return -1;
  }
  m->entries = (dp_metadata_entry*)calloc((size_t)(count / 2 + 1), sizeof(dp_metadata_entry));
  m->arrays = (jbyteArray*)calloc((size_t)(count + 1), sizeof(jbyteArray));
  m->texts = (jbyte**)calloc((size_t)(count + 1), sizeof(jbyte*));
  m->count = count;
  if (!m->entries || !m->arrays || !m->texts) {
    dp_java_metadata_release(jenv, m);
    dp_java_throw_illegal(jenv, "out of memory");
    return -1;
  }
  for (jsize i = 0; i < count; ++i) {
    m->arrays[i] = (jbyteArray)(*jenv)->GetObjectArrayElement(jenv, pairs, i);
    m->texts[i] = m->arrays[i] ? (*jenv)->GetByteArrayElements(jenv, m->arrays[i], NULL) : NULL;
    if (!m->texts[i]) {
      const int pending = (*jenv)->ExceptionCheck(jenv);
      dp_java_metadata_release(jenv, m);
      if (!pending) dp_java_throw_illegal(jenv, "metadata keys and values must not be null");
      return -1;
    }
    if (i % 2 == 0) {
      m->entries[i / 2].key = (const char*)m->texts[i];
    } else {
      m->entries[i / 2].value = (const char*)m->texts[i];
    }
  }
  return 0;
}
%}
%typemap(jni) (const dp_metadata_entry* metadata, size_t n_metadata) "jobjectArray"
%typemap(jtype) (const dp_metadata_entry* metadata, size_t n_metadata) "byte[][]"
%typemap(jstype) (const dp_metadata_entry* metadata, size_t n_metadata) "String[]"
%typemap(javain) (const dp_metadata_entry* metadata, size_t n_metadata) "CApi.utf8All($javainput)"
%typemap(in) (const dp_metadata_entry* metadata, size_t n_metadata) (dp_java_metadata held) {
  if (dp_java_metadata_get(jenv, $input, &held) != 0) return $null;
  $1 = held.entries;
  $2 = (size_t)(held.count / 2);
}
%typemap(freearg) (const dp_metadata_entry* metadata, size_t n_metadata) {
  dp_java_metadata_release(jenv, &held$argnum);
}

/* Each function's return type (generated; uses the DP_JAVA_RETURN macros above). */
%include "returns.i"

/* The handles, option structs and shared helpers, wrapped with the typemaps above. */
%include "dataparallel_common.i"

/* ---- borrowing a direct buffer -----------------------------------------------------------
   The tensor adopts the buffer's memory and holds a global reference to the buffer until
   the library lets go of the memory; the deleter may run on a library thread, which it
   attaches to the JVM (as a daemon) to drop the reference, and which detaches when it
   ends (JNI requires it: an attached thread that exits stays a live Thread). */
%ignore dp_tensor_to_dlpack;
%ignore dp_tensor_from_dlpack;
%ignore DLManagedTensor;
%{
static JavaVM* dp_java_vm = NULL;
static pthread_key_t dp_java_detach_key;
static pthread_once_t dp_java_detach_once = PTHREAD_ONCE_INIT;

/* Runs when a thread this binding attached ends. */
static void dp_java_detach(void* vm) { (*(JavaVM*)vm)->DetachCurrentThread((JavaVM*)vm); }

static void dp_java_make_detach_key(void) {
  (void)pthread_key_create(&dp_java_detach_key, dp_java_detach);
}

/* This thread's JNIEnv, attaching a library thread to the JVM (as a daemon, detached
   when it ends); NULL when the JVM cannot be reached (it is shutting down). */
static JNIEnv* dp_java_env(void) {
  JNIEnv* env = NULL;
  if (!dp_java_vm) return NULL;
  if ((*dp_java_vm)->GetEnv(dp_java_vm, (void**)&env, JNI_VERSION_1_8) != JNI_OK) {
    if ((*dp_java_vm)->AttachCurrentThreadAsDaemon(dp_java_vm, (void**)&env, NULL) != JNI_OK) {
      return NULL;
    }
    pthread_once(&dp_java_detach_once, dp_java_make_detach_key);
    (void)pthread_setspecific(dp_java_detach_key, dp_java_vm);
  }
  return env;
}

static void dp_java_buffer_deleter(void* ref, void* data) {
  (void)data;
  JNIEnv* env = dp_java_env();
  if (!env) return; /* the JVM is going away: the buffer outlives us anyway */
  (*env)->DeleteGlobalRef(env, (jobject)ref);
}

/* ---- log messages: a context's messages to a Java object's deliver(int, String) ---- */
typedef struct dp_java_log_target {
  jobject listener; /* a global reference, dropped when the context ends */
  jmethodID deliver;
} dp_java_log_target;

static void dp_java_log(void* user, dp_log_level level, const char* message) {
  dp_java_log_target* t = (dp_java_log_target*)user;
  JNIEnv* env = dp_java_env();
  if (!env) return;
  jstring text = dp_java_string(env, message ? message : "");
  if (text) {
    (*env)->CallVoidMethod(env, t->listener, t->deliver, (jint)level, text);
    (*env)->DeleteLocalRef(env, text);
  }
  (*env)->ExceptionClear(env); /* the listener catches its own; nothing may escape here */
}

static void dp_java_log_free(void* user) {
  dp_java_log_target* t = (dp_java_log_target*)user;
  JNIEnv* env = dp_java_env();
  if (env) (*env)->DeleteGlobalRef(env, t->listener);
  free(t);
}
%}
%typemap(in, numinputs=0) JNIEnv* env "$1 = jenv;"
%typemap(jni) jobject listener "jobject"
%typemap(jtype) jobject listener "Object"
%typemap(jstype) jobject listener "Object"
%typemap(javain) jobject listener "$javainput"
%typemap(in) jobject listener "$1 = $input;"
%inline %{
/* Sends the context's log messages to listener.deliver(int level, String message), on
   whichever thread logs (library threads attach to the JVM). The listener is held until
   the context ends; dp_java_options_drop_log lets it go if creating the context failed. */
dp_result dp_java_options_set_log(JNIEnv* env, dp_context_options* o, jobject listener) {
  if (!o || !listener) return dp_set_error(DP_ERR_INVALID_ARGUMENT, "set_log: null argument");
  if (!dp_java_vm && (*env)->GetJavaVM(env, &dp_java_vm) != JNI_OK) {
    return dp_set_error(DP_ERR_INTERNAL, "set_log: no JavaVM");
  }
  jclass cls = (*env)->GetObjectClass(env, listener);
  jmethodID deliver = cls ? (*env)->GetMethodID(env, cls, "deliver", "(ILjava/lang/String;)V")
                          : NULL;
  if (cls) (*env)->DeleteLocalRef(env, cls);
  if (!deliver) {
    (*env)->ExceptionClear(env);
    return dp_set_error(DP_ERR_INVALID_ARGUMENT, "set_log: the listener has no deliver(int, String)");
  }
  dp_java_log_target* t = (dp_java_log_target*)malloc(sizeof *t);
  if (!t) return dp_set_error(DP_ERR_OUT_OF_MEMORY, "set_log: out of memory");
  t->listener = (*env)->NewGlobalRef(env, listener);
  t->deliver = deliver;
  if (!t->listener) {
    free(t);
    return dp_set_error(DP_ERR_OUT_OF_MEMORY, "set_log: no global reference");
  }
  o->log_fn = dp_java_log;
  o->log_user_data = t;
  o->log_user_data_free = dp_java_log_free;
  return DP_OK;
}

/* After a failed dp_context_create the listener is still the options' to let go. */
void dp_java_options_drop_log(dp_context_options* o) {
  if (!o || o->log_fn != dp_java_log) return;
  dp_java_log_free(o->log_user_data);
  o->log_fn = NULL;
  o->log_user_data = NULL;
  o->log_user_data_free = NULL;
}
%}
%typemap(jni) jobject buffer "jobject"
%typemap(jtype) jobject buffer "java.nio.Buffer"
%typemap(jstype) jobject buffer "java.nio.Buffer"
%typemap(javain) jobject buffer "$javainput"
%typemap(in) jobject buffer "$1 = $input;"
%inline %{
/* A tensor over a direct buffer's memory (its whole capacity, `shape` of `dtype`) on CPU
   device cpu_index, without a copy: writes by either side are seen by the other. */
dp_result dp_java_tensor_borrow(JNIEnv* env, dp_context* ctx, dp_dtype dtype, const int64_t* shape,
                                size_t ndim, jobject buffer, int32_t cpu_index, dp_tensor** out) {
  dp_java_memory memory;
  if (!buffer) return dp_set_error(DP_ERR_INVALID_ARGUMENT, "borrow: buffer is null");
  if (dp_java_memory_get(env, buffer, 0, &memory) != 0) {
    (*env)->ExceptionClear(env);
    return dp_set_error(DP_ERR_INVALID_ARGUMENT,
                        "borrow: the buffer must be a direct FloatBuffer, DoubleBuffer, "
                        "LongBuffer, IntBuffer, ShortBuffer or ByteBuffer");
  }
  if (memory.array) {
    dp_java_memory_release(env, &memory, 0);
    return dp_set_error(DP_ERR_INVALID_ARGUMENT,
                        "borrow: needs a direct buffer, not an array (copy arrays instead)");
  }
  if (!dp_java_vm && (*env)->GetJavaVM(env, &dp_java_vm) != JNI_OK) {
    return dp_set_error(DP_ERR_INTERNAL, "borrow: no JavaVM");
  }
  jobject ref = (*env)->NewGlobalRef(env, buffer);
  if (!ref) return dp_set_error(DP_ERR_OUT_OF_MEMORY, "borrow: no global reference");
  /* on failure the deleter has dropped the reference */
  return dp_tensor_from_adopted(ctx, dtype, shape, ndim, memory.data, memory.size, cpu_index,
                                dp_java_buffer_deleter, ref, out);
}
%}

/* A new dp_ddp_phase_times carries its struct_size, which dp_ddp_stats reads. */
%extend dp_ddp_phase_times {
  dp_ddp_phase_times() {
    dp_ddp_phase_times* t = (dp_ddp_phase_times*)calloc(1, sizeof(dp_ddp_phase_times));
    if (t) t->struct_size = sizeof(dp_ddp_phase_times);
    return t;
  }
}

%include "dataparallel/dataparallel.h"
