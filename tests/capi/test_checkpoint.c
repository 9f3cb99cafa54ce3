/* Checkpoints through the C API: save/load round trips, a file written by a plain Python
 * safetensors writer (tests/fixtures/plain_writer_mlp.safetensors), and corrupt or
 * mismatched files, which must be rejected with the module left exactly as it was. */
#define _GNU_SOURCE /* mkdtemp */
#include <dirent.h>
#include <locale.h>
#include <stdlib.h>
#include <unistd.h>

#include "torch_compare.h"

#ifndef DP_FIXTURES_DIR
#error "DP_FIXTURES_DIR must name tests/fixtures"
#endif

typedef struct suite {
  dp_context* ctx;
  char dir[64];
} suite;

static int setup(void** state) {
  suite* s = (suite*)calloc(1, sizeof(suite));
  s->ctx = make_context(2);
  snprintf(s->dir, sizeof s->dir, "/tmp/dp_checkpoint_XXXXXX");
  if (mkdtemp(s->dir) == NULL) return -1;
  *state = s;
  return 0;
}

static int teardown(void** state) {
  suite* s = (suite*)*state;
  DIR* d = opendir(s->dir);
  if (d) {
    struct dirent* e;
    char path[512];
    while ((e = readdir(d)) != NULL) {
      if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) continue;
      snprintf(path, sizeof path, "%s/%s", s->dir, e->d_name);
      unlink(path);
    }
    closedir(d);
  }
  rmdir(s->dir);
  dp_context_release(s->ctx);
  free(s);
  return 0;
}

static void path_in(const suite* s, const char* name, char* out, size_t size) {
  snprintf(out, size, "%s/%s", s->dir, name);
}

/* Files in the suite's directory whose name has ".tmp" in it: a save's temporaries. */
static int temporaries_in(const suite* s) {
  DIR* d = opendir(s->dir);
  if (d == NULL) fail_msg("cannot list %s", s->dir);
  int n = 0;
  struct dirent* e;
  while ((e = readdir(d)) != NULL) n += strstr(e->d_name, ".tmp") != NULL;
  closedir(d);
  return n;
}

static void write_bytes(const char* path, const void* bytes, size_t n) {
  FILE* f = fopen(path, "wb");
  if (f == NULL) fail_msg("cannot write %s", path);
  if (n > 0 && fwrite(bytes, 1, n, f) != n) fail_msg("short write to %s", path);
  fclose(f);
}

static unsigned char* read_bytes(const char* path, size_t* n) {
  FILE* f = fopen(path, "rb");
  if (f == NULL) fail_msg("cannot read %s", path);
  fseek(f, 0, SEEK_END);
  const long size = ftell(f);
  fseek(f, 0, SEEK_SET);
  unsigned char* b = (unsigned char*)malloc((size_t)size + 1);
  if (fread(b, 1, (size_t)size, f) != (size_t)size) fail_msg("short read of %s", path);
  fclose(f);
  *n = (size_t)size;
  return b;
}

static uint64_t read_le64(const unsigned char* b) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = (v << 8) | b[i];
  return v;
}

static void write_le64(unsigned char* b, uint64_t v) {
  for (int i = 0; i < 8; ++i) b[i] = (unsigned char)(v >> (8 * i));
}

/* ---------------------------------------------------------------------------------- */
/* A small safetensors writer, to make files with one thing wrong                      */
/* ---------------------------------------------------------------------------------- */

typedef struct st_entry {
  const char* name;
  const char* dtype; /* a JSON value, normally "\"F32\"" */
  char shape[64];    /* a JSON value such as "[16,20]" */
  const void* data;
  size_t nbytes;
  size_t end_extra; /* added to the end offset (0 for a consistent entry) */
} st_entry;

static void shape_json(const int64_t* shape, size_t ndim, char* out, size_t size) {
  size_t used = (size_t)snprintf(out, size, "[");
  for (size_t i = 0; i < ndim; ++i) {
    used += (size_t)snprintf(out + used, size - used, "%s%lld", i ? "," : "", (long long)shape[i]);
  }
  snprintf(out + used, size - used, "]");
}

/* The entries of the fixture MLP (PyTorch's weights, not the library's own). */
static size_t mlp_entries(st_entry* e) {
  for (size_t i = 0; i < MLP_FIXTURE_PARAMETERS; ++i) {
    const named_fixture* p = &kMlpParameters[i];
    memset(&e[i], 0, sizeof e[i]);
    e[i].name = p->name;
    e[i].dtype = "\"F32\"";
    shape_json(p->shape, p->ndim, e[i].shape, sizeof e[i].shape);
    e[i].data = p->values;
    e[i].nbytes = numel_of(p->shape, p->ndim) * sizeof(float);
  }
  return MLP_FIXTURE_PARAMETERS;
}

/* The header is `header_json` when not NULL, else built from the entries. */
static void write_safetensors(const char* path, const st_entry* e, size_t n,
                              const char* header_json) {
  char header[8192];
  size_t used = 0;
  if (header_json) {
    used = (size_t)snprintf(header, sizeof header, "%s", header_json);
  } else {
    size_t offset = 0;
    used = (size_t)snprintf(header, sizeof header, "{\"__metadata__\":{\"format\":\"pt\"}");
    for (size_t i = 0; i < n; ++i) {
      const size_t end = offset + e[i].nbytes + e[i].end_extra;
      used += (size_t)snprintf(header + used, sizeof header - used,
                               ",\"%s\":{\"dtype\":%s,\"shape\":%s,\"data_offsets\":[%zu,%zu]}",
                               e[i].name, e[i].dtype, e[i].shape, offset, end);
      offset = end;
    }
    used += (size_t)snprintf(header + used, sizeof header - used, "}");
  }
  while (used % 8 != 0) header[used++] = ' ';
  FILE* f = fopen(path, "wb");
  if (f == NULL) fail_msg("cannot write %s", path);
  unsigned char len[8];
  write_le64(len, used);
  fwrite(len, 1, 8, f);
  fwrite(header, 1, used, f);
  for (size_t i = 0; i < n && !header_json; ++i) fwrite(e[i].data, 1, e[i].nbytes, f);
  fclose(f);
}

/* ---------------------------------------------------------------------------------- */
/* Module state                                                                       */
/* ---------------------------------------------------------------------------------- */

/* Every parameter's and buffer's bytes, in order. */
typedef struct snapshot {
  unsigned char* bytes;
  size_t n;
} snapshot;

static void append_tensor_bytes(snapshot* s, const dp_tensor* t) {
  size_t nb = 0;
  ASSERT_OK(dp_tensor_nbytes(t, &nb));
  s->bytes = (unsigned char*)realloc(s->bytes, s->n + nb + 1);
  ASSERT_OK(dp_tensor_to_host(t, s->bytes + s->n, nb));
  s->n += nb;
}

static snapshot take_snapshot(const dp_module* m) {
  snapshot s = {NULL, 0};
  size_t np = 0, nb = 0;
  ASSERT_OK(dp_module_parameter_count(m, &np));
  ASSERT_OK(dp_module_buffer_count(m, &nb));
  for (size_t i = 0; i < np + nb; ++i) {
    dp_tensor* t = NULL;
    if (i < np) {
      ASSERT_OK(dp_module_parameter(m, i, NULL, &t));
    } else {
      ASSERT_OK(dp_module_buffer(m, i - np, NULL, &t));
    }
    append_tensor_bytes(&s, t);
    dp_tensor_release(t);
  }
  return s;
}

static int snapshots_equal(const snapshot* a, const snapshot* b) {
  return a->n == b->n && memcmp(a->bytes, b->bytes, a->n) == 0;
}

/* Loading `path` fails with `code`, a message naming `needle`, and changes nothing. */
static void assert_load_rejected(dp_module* m, const char* path, dp_result code,
                                 const char* needle) {
  snapshot before = take_snapshot(m);
  ASSERT_ERROR(dp_module_load(m, path), code, needle);
  snapshot after = take_snapshot(m);
  if (!snapshots_equal(&before, &after)) fail_msg("a rejected load of %s changed the module", path);
  free(before.bytes);
  free(after.bytes);
}

/* The module's parameters are exactly the fixture MLP's. */
static void assert_holds_fixture_mlp(const dp_module* m) {
  for (size_t i = 0; i < MLP_FIXTURE_PARAMETERS; ++i) {
    const named_fixture* p = &kMlpParameters[i];
    dp_tensor* t = NULL;
    ASSERT_OK(dp_module_get(m, p->name, &t));
    assert_tensor_near(p->name, t, p->values, p->shape, p->ndim, 0, 0);
    dp_tensor_release(t);
  }
}

/* ---------------------------------------------------------------------------------- */
/* Round trips and the plain writer's file                                            */
/* ---------------------------------------------------------------------------------- */

static void save_then_load_restores_exact_values_into_a_fresh_module(void** state) {
  suite* s = (suite*)*state;
  char path[256];
  path_in(s, "mlp.safetensors", path, sizeof path);
  dp_module* saved = build_mlp(s->ctx, cpu_dev(0));
  dp_module* fresh = build_mlp(s->ctx, cpu_dev(1));
  snapshot want = take_snapshot(saved);
  snapshot other = take_snapshot(fresh);
  assert_false(snapshots_equal(&want, &other)); /* two draws of the initialisation */
  ASSERT_OK(dp_module_save(saved, path));
  assert_int_not_equal(access(path, F_OK), -1);
  assert_int_equal(temporaries_in(s), 0); /* written to a temporary file, then renamed */

  dp_tensor* w = NULL;
  ASSERT_OK(dp_module_get(fresh, "0.weight", &w));
  ASSERT_OK(dp_module_load(fresh, path));
  snapshot got = take_snapshot(fresh);
  assert_true(snapshots_equal(&want, &got));
  /* values are copied into the existing tensors: a handle taken before sees them */
  dp_tensor* w_saved = NULL;
  ASSERT_OK(dp_module_get(saved, "0.weight", &w_saved));
  float a[16 * 20], b[16 * 20];
  read_f32(w, a, 16 * 20);
  read_f32(w_saved, b, 16 * 20);
  assert_memory_equal(a, b, sizeof a);
  dp_device dev;
  ASSERT_OK(dp_tensor_device(w, &dev));
  assert_int_equal(dev.index, 1); /* the module stays on its own device */
  dp_tensor_release(w_saved);
  dp_tensor_release(w);
  free(want.bytes);
  free(other.bytes);
  free(got.bytes);
  dp_module_release(fresh);
  dp_module_release(saved);
}

static dp_module* linear_batchnorm(dp_context* ctx) {
  dp_module* seq = NULL;
  dp_module* m = NULL;
  ASSERT_OK(dp_module_sequential(ctx, &seq));
  ASSERT_OK(dp_module_linear(ctx, 4, 3, 1, cpu_dev(0), &m));
  append_child(seq, m);
  ASSERT_OK(dp_module_batchnorm1d(ctx, 3, 1e-5, 0.1, cpu_dev(0), &m));
  append_child(seq, m);
  return seq;
}

static void save_then_load_restores_buffers_and_the_int64_batch_count(void** state) {
  suite* s = (suite*)*state;
  char path[256];
  path_in(s, "bn.safetensors", path, sizeof path);
  dp_module* saved = linear_batchnorm(s->ctx);
  const int64_t shape[2] = {5, 4};
  dp_tensor* x = fixture_tensor(s->ctx, LINEAR_X, shape, 2, 0); /* any 20 values */
  dp_tensor* y = NULL;
  for (int k = 0; k < 3; ++k) {
    ASSERT_OK(dp_module_forward1(saved, x, &y));
    dp_tensor_release(y);
  }
  ASSERT_OK(dp_module_save(saved, path));
  dp_module* fresh = linear_batchnorm(s->ctx);
  ASSERT_OK(dp_module_load(fresh, path));
  snapshot want = take_snapshot(saved);
  snapshot got = take_snapshot(fresh);
  assert_true(snapshots_equal(&want, &got));
  dp_tensor* count = NULL;
  int64_t n = 0;
  ASSERT_OK(dp_module_get(fresh, "1.num_batches_tracked", &count));
  ASSERT_OK(dp_tensor_to_host(count, &n, sizeof n));
  assert_int_equal(n, 3);
  dp_tensor_release(count);
  free(want.bytes);
  free(got.bytes);
  dp_tensor_release(x);
  dp_module_release(fresh);
  dp_module_release(saved);
}

static void saved_file_is_plain_safetensors_with_every_entry_in_order(void** state) {
  suite* s = (suite*)*state;
  char path[256];
  path_in(s, "plain.safetensors", path, sizeof path);
  dp_module* m = linear_batchnorm(s->ctx);
  ASSERT_OK(dp_module_save(m, path));
  size_t size = 0;
  unsigned char* b = read_bytes(path, &size);
  assert_true(size >= 8);
  const uint64_t n = read_le64(b);
  assert_true(n <= size - 8);
  char* header = (char*)malloc(n + 1);
  memcpy(header, b + 8, n);
  header[n] = '\0';
  assert_int_equal(header[0], '{');
  /* data: 4 x 3 + 3 weights and biases, then BatchNorm's 4 float vectors and one int64 */
  const size_t data = (12 + 3 + 3 * 4) * sizeof(float) + sizeof(int64_t);
  assert_int_equal(size, 8 + n + data);
  const char* names[] = {"\"0.weight\"",
                         "\"0.bias\"",
                         "\"1.weight\"",
                         "\"1.bias\"",
                         "\"1.running_mean\"",
                         "\"1.running_var\"",
                         "\"1.num_batches_tracked\""};
  const char* prev = header;
  for (size_t i = 0; i < sizeof names / sizeof names[0]; ++i) {
    const char* at = strstr(header, names[i]);
    if (at == NULL) fail_msg("the header lacks %s: %s", names[i], header);
    assert_true(at >= prev); /* registration order, as PyTorch's state_dict */
    prev = at;
  }
  assert_non_null(strstr(header, "\"I64\""));
  assert_non_null(strstr(header, "\"F32\""));
  free(header);
  free(b);
  dp_module_release(m);
}

static void plain_writer_file_loads_into_a_c_built_mlp_and_gives_pytorchs_output(void** state) {
  suite* s = (suite*)*state;
  dp_module* mlp = build_mlp(s->ctx, cpu_dev(0));
  ASSERT_OK(dp_module_load(mlp, DP_FIXTURES_DIR "/plain_writer_mlp.safetensors"));
  assert_holds_fixture_mlp(mlp);
  dp_tensor* x = fixture_tensor(s->ctx, FIXTURE(MLP_X), 0);
  dp_tensor* y = NULL;
  ASSERT_OK(dp_module_forward1(mlp, x, &y));
  assert_tensor_matches("MLP output", y, FIXTURE(MLP_Y));
  dp_tensor_release(y);
  dp_tensor_release(x);
  dp_module_release(mlp);
}

static void the_test_writer_makes_files_that_load(void** state) {
  /* The control for the corruption tests below: without a corruption, they would pass. */
  suite* s = (suite*)*state;
  char path[256];
  path_in(s, "control.safetensors", path, sizeof path);
  st_entry e[8];
  const size_t n = mlp_entries(e);
  write_safetensors(path, e, n, NULL);
  dp_module* mlp = build_mlp(s->ctx, cpu_dev(0));
  ASSERT_OK(dp_module_load(mlp, path));
  assert_holds_fixture_mlp(mlp);
  dp_module_release(mlp);
}

/* ---------------------------------------------------------------------------------- */
/* Rejected files                                                                     */
/* ---------------------------------------------------------------------------------- */

static void truncated_files_are_rejected_and_change_nothing(void** state) {
  suite* s = (suite*)*state;
  size_t size = 0;
  unsigned char* b = read_bytes(DP_FIXTURES_DIR "/plain_writer_mlp.safetensors", &size);
  const size_t header = (size_t)read_le64(b);
  const struct {
    size_t length;
    const char* needle;
  } cuts[] = {
      {0, "too short"},                /* empty */
      {4, "too short"},                /* half the length field */
      {7, "too short"},                /* one byte short of it */
      {8, "truncated"},                /* the length field alone */
      {8 + header / 2, "truncated"},   /* in the header */
      {8 + header - 1, "truncated"},   /* one byte short of the header */
      {8 + header, "truncated"},       /* the header without any data */
      {8 + header + 100, "truncated"}, /* in the first tensor */
      {size - 1, "truncated"},         /* one byte short of the end */
  };
  dp_module* mlp = build_mlp(s->ctx, cpu_dev(0));
  for (size_t i = 0; i < sizeof cuts / sizeof cuts[0]; ++i) {
    char path[256], name[64];
    snprintf(name, sizeof name, "cut_at_%zu.safetensors", cuts[i].length);
    path_in(s, name, path, sizeof path);
    write_bytes(path, b, cuts[i].length);
    assert_load_rejected(mlp, path, DP_ERR_FORMAT, name); /* the message names the file */
    assert_load_rejected(mlp, path, DP_ERR_FORMAT, cuts[i].needle);
  }
  free(b);
  dp_module_release(mlp);
}

static void a_header_length_beyond_the_file_is_rejected(void** state) {
  suite* s = (suite*)*state;
  size_t size = 0;
  unsigned char* b = read_bytes(DP_FIXTURES_DIR "/plain_writer_mlp.safetensors", &size);
  const uint64_t lengths[] = {size - 8 + 1, size, (uint64_t)1 << 40, UINT64_MAX};
  dp_module* mlp = build_mlp(s->ctx, cpu_dev(0));
  for (size_t i = 0; i < sizeof lengths / sizeof lengths[0]; ++i) {
    char path[256];
    path_in(s, "long_header.safetensors", path, sizeof path);
    write_le64(b, lengths[i]);
    write_bytes(path, b, size);
    char needle[64];
    snprintf(needle, sizeof needle, "header length %llu", (unsigned long long)lengths[i]);
    assert_load_rejected(mlp, path, DP_ERR_FORMAT, needle);
  }
  free(b);
  dp_module_release(mlp);
}

static void headers_that_are_not_a_json_object_are_rejected(void** state) {
  suite* s = (suite*)*state;
  const struct {
    const char* json;
    const char* needle;
  } cases[] = {
      {"{\"0.weight\": {\"dtype\": \"F32\", ", "not valid JSON"},
      {"this is not json", "not valid JSON"},
      {"[1, 2, 3]", "not a JSON object"},
      {"{\"__metadata__\": [1]}", "__metadata__"},
      {"{\"__metadata__\": {\"format\": 7}}", "__metadata__"},
  };
  dp_module* mlp = build_mlp(s->ctx, cpu_dev(0));
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i) {
    char path[256];
    path_in(s, "bad_json.safetensors", path, sizeof path);
    write_safetensors(path, NULL, 0, cases[i].json);
    assert_load_rejected(mlp, path, DP_ERR_FORMAT, cases[i].needle);
  }
  dp_module_release(mlp);
}

/* Writes the fixture MLP with one entry changed by `edit`, and expects rejection. */
static void assert_edited_file_rejected(suite* s, dp_module* mlp, const char* file,
                                        void (*edit)(st_entry* e, size_t* n), const char* needle) {
  char path[256];
  path_in(s, file, path, sizeof path);
  st_entry e[8];
  size_t n = mlp_entries(e);
  edit(e, &n);
  write_safetensors(path, e, n, NULL);
  assert_load_rejected(mlp, path, DP_ERR_FORMAT, needle);
}

static void dtype_f16(st_entry* e, size_t* n) {
  (void)n;
  e[2].dtype = "\"F16\"";
}
static void dtype_lowercase(st_entry* e, size_t* n) {
  (void)n;
  e[2].dtype = "\"f32\"";
}
static void dtype_number(st_entry* e, size_t* n) {
  (void)n;
  e[2].dtype = "32";
}
static void dtype_f64_for_a_float32_parameter(st_entry* e, size_t* n) {
  /* a well-formed float64 entry: 8 bytes per element */
  static double wide[8];
  (void)n;
  for (int i = 0; i < 8; ++i) wide[i] = MLP_2_BIAS[i];
  e[3].dtype = "\"F64\"";
  e[3].data = wide;
  e[3].nbytes = sizeof wide;
}

static void entries_with_a_bad_dtype_are_rejected(void** state) {
  suite* s = (suite*)*state;
  dp_module* mlp = build_mlp(s->ctx, cpu_dev(0));
  assert_edited_file_rejected(s, mlp, "f16.safetensors", dtype_f16, "\"F16\"");
  assert_edited_file_rejected(s, mlp, "lower.safetensors", dtype_lowercase, "\"f32\"");
  assert_edited_file_rejected(s, mlp, "number.safetensors", dtype_number, "2.weight");
  assert_edited_file_rejected(s, mlp, "f64.safetensors", dtype_f64_for_a_float32_parameter,
                              "2.bias");
  dp_module_release(mlp);
}

static void shape_larger_than_data(st_entry* e, size_t* n) {
  (void)n;
  snprintf(e[0].shape, sizeof e[0].shape, "[17,20]");
}
static void offsets_longer_than_shape(st_entry* e, size_t* n) {
  (void)n;
  e[1].end_extra = 4; /* 17 floats of room for a [16] bias */
}
static void offsets_past_the_data(st_entry* e, size_t* n) {
  e[*n - 1].end_extra = 4;
}
static void negative_size(st_entry* e, size_t* n) {
  (void)n;
  snprintf(e[1].shape, sizeof e[1].shape, "[-16]");
}
static void shape_not_an_array(st_entry* e, size_t* n) {
  (void)n;
  snprintf(e[1].shape, sizeof e[1].shape, "16");
}

static void entries_whose_shape_and_offsets_disagree_are_rejected(void** state) {
  suite* s = (suite*)*state;
  dp_module* mlp = build_mlp(s->ctx, cpu_dev(0));
  assert_edited_file_rejected(s, mlp, "big_shape.safetensors", shape_larger_than_data,
                              "\"0.weight\" holds 1280 bytes");
  assert_edited_file_rejected(s, mlp, "long_offsets.safetensors", offsets_longer_than_shape,
                              "\"0.bias\" holds 68 bytes");
  assert_edited_file_rejected(s, mlp, "past_data.safetensors", offsets_past_the_data, "4.bias");
  assert_edited_file_rejected(s, mlp, "negative.safetensors", negative_size, "0.bias");
  assert_edited_file_rejected(s, mlp, "scalar_shape.safetensors", shape_not_an_array, "0.bias");
  dp_module_release(mlp);
}

static void drop_last(st_entry* e, size_t* n) {
  (void)e;
  *n -= 1; /* "4.bias" */
}
static void add_extra(st_entry* e, size_t* n) {
  e[*n] = e[*n - 1];
  e[*n].name = "5.bias";
  *n += 1;
}
static void transposed_weight(st_entry* e, size_t* n) {
  (void)n;
  snprintf(e[0].shape, sizeof e[0].shape, "[20,16]"); /* the same bytes, another shape */
}
static void flattened_weight(st_entry* e, size_t* n) {
  (void)n;
  snprintf(e[2].shape, sizeof e[2].shape, "[128]");
}

static void files_of_another_model_are_rejected_naming_the_entry(void** state) {
  suite* s = (suite*)*state;
  dp_module* mlp = build_mlp(s->ctx, cpu_dev(0));
  assert_edited_file_rejected(s, mlp, "missing.safetensors", drop_last, "\"4.bias\"");
  assert_edited_file_rejected(s, mlp, "extra.safetensors", add_extra, "\"5.bias\"");
  assert_edited_file_rejected(s, mlp, "transposed.safetensors", transposed_weight, "\"0.weight\"");
  assert_edited_file_rejected(s, mlp, "flattened.safetensors", flattened_weight, "\"2.weight\"");
  dp_module_release(mlp);
}

static void unreadable_paths_give_an_io_error(void** state) {
  suite* s = (suite*)*state;
  dp_module* mlp = build_mlp(s->ctx, cpu_dev(0));
  char path[256];
  path_in(s, "no/such/dir/mlp.safetensors", path, sizeof path);
  assert_load_rejected(mlp, path, DP_ERR_IO, path);
  ASSERT_ERROR(dp_module_save(mlp, path), DP_ERR_IO, "no/such/dir");
  ASSERT_ERROR(dp_module_load(mlp, NULL), DP_ERR_INVALID_ARGUMENT, "path");
  ASSERT_ERROR(dp_module_save(mlp, NULL), DP_ERR_INVALID_ARGUMENT, "path");
  ASSERT_ERROR(dp_module_load(NULL, path), DP_ERR_INVALID_ARGUMENT, "m is NULL");
  dp_module_release(mlp);
}

/* The entries' offsets must tile the data section exactly, as the format requires (the
   reference implementation rejects such files: InvalidOffset, MetadataIncompleteBuffer).
   A header length decreased into the header's space padding (one corrupted byte) would
   otherwise parse with every tensor read one byte early. */
static void a_header_length_cut_into_its_padding_is_rejected(void** state) {
  suite* s = (suite*)*state;
  char path[256];
  path_in(s, "control.safetensors", path, sizeof path);
  st_entry e[8];
  const size_t n_entries = mlp_entries(e);
  write_safetensors(path, e, n_entries, NULL);
  size_t size = 0;
  unsigned char* good = read_bytes(path, &size);
  const uint64_t n = read_le64(good);
  /* the same file with 8 more spaces of padding, but a length one short of them */
  unsigned char* bad = (unsigned char*)malloc(size + 8);
  write_le64(bad, n + 7);
  memcpy(bad + 8, good + 8, (size_t)n);
  memset(bad + 8 + n, ' ', 8);
  memcpy(bad + 16 + n, good + 8 + n, size - 8 - (size_t)n);
  path_in(s, "short_length.safetensors", path, sizeof path);
  write_bytes(path, bad, size + 8);
  free(bad);
  free(good);

  dp_module* mlp = build_mlp(s->ctx, cpu_dev(0));
  snapshot before = take_snapshot(mlp);
  const dp_result r = dp_module_load(mlp, path);
  snapshot after = take_snapshot(mlp);
  const int unchanged = snapshots_equal(&before, &after);
  free(before.bytes);
  free(after.bytes);
  dp_module_release(mlp);
  if (r != DP_ERR_FORMAT) {
    fail_msg("-> %s (%s), expected DP_ERR_FORMAT", dp_result_string(r), dp_last_error());
  }
  if (!unchanged) fail_msg("a rejected load changed the module");
}

/* A directory cannot be read as a file: DP_ERR_IO naming it (std::ifstream opens a
   directory on Linux and only fails when read). */
static void a_directory_is_unreadable_and_gives_an_io_error(void** state) {
  suite* s = (suite*)*state;
  dp_module* mlp = build_mlp(s->ctx, cpu_dev(0));
  snapshot before = take_snapshot(mlp);
  const dp_result r = dp_module_load(mlp, s->dir);
  snapshot after = take_snapshot(mlp);
  const int unchanged = snapshots_equal(&before, &after);
  free(before.bytes);
  free(after.bytes);
  dp_module_release(mlp);
  if (!unchanged) fail_msg("a failed load of a directory changed the module");
  if (r != DP_ERR_IO) {
    fail_msg("loading a directory -> %s (%s), expected DP_ERR_IO", dp_result_string(r),
             dp_last_error());
  }
  if (strstr(dp_last_error(), s->dir) == NULL)
    fail_msg("message \"%s\" does not name %s", dp_last_error(), s->dir);
}

/* dp_checkpoint_metadata reads the header only: a file with an F16 entry (which
   dp_module_load refuses) and no data bytes still gives its metadata, while a value with
   a NUL, which no C string can hold, is a format error naming the key. */
static void metadata_reads_any_header_and_refuses_a_nul_in_the_value(void** state) {
  suite* s = (suite*)*state;
  char path[256], buf[16];
  path_in(s, "f16.safetensors", path, sizeof path);
  write_safetensors(path, NULL, 0,
                    "{\"__metadata__\":{\"epoch\":\"3\",\"odd\":\"a\\u0000b\"},"
                    "\"h\":{\"dtype\":\"F16\",\"shape\":[2],\"data_offsets\":[0,4]}}");
  size_t needed = 0;
  ASSERT_OK(dp_checkpoint_metadata(path, "epoch", buf, sizeof buf, &needed));
  assert_string_equal(buf, "3");
  assert_int_equal(needed, 2);
  assert_int_equal(dp_checkpoint_metadata(path, "odd", buf, sizeof buf, &needed), DP_ERR_FORMAT);
  assert_non_null(strstr(dp_last_error(), "\"odd\" holds a NUL"));
}

static dp_result no_outputs(void* user, dp_module* self, dp_tensor* const* inputs, size_t n_inputs,
                            dp_tensor** outputs, size_t max_outputs, size_t* n_outputs) {
  (void)user, (void)self, (void)inputs, (void)n_inputs, (void)outputs, (void)max_outputs;
  *n_outputs = 0;
  return DP_OK;
}

static float first_value(const dp_module* m, const char* name) {
  dp_tensor* t = NULL;
  float v = 0;
  ASSERT_OK(dp_module_get(m, name, &t));
  ASSERT_OK(dp_tensor_to_host(t, &v, sizeof v));
  dp_tensor_release(t);
  return v;
}

/* A replica on cpu:1 reads the original's parameters in place, so a load into it is
   refused (DP_ERR_STATE). Its buffer "count" comes first in its state and is its own
   copy: the refusal must come before that buffer is written, for both load functions. */
static void a_load_refused_part_way_changes_nothing(void** state) {
  suite* s = (suite*)*state;
  dp_custom_module_desc desc = DP_CUSTOM_MODULE_DESC_INIT;
  desc.forward = no_outputs;
  dp_module *m = NULL, *lin = NULL;
  ASSERT_OK(dp_module_custom(s->ctx, &desc, &m));
  const int64_t one = 1;
  dp_tensor* count = NULL;
  ASSERT_OK(dp_tensor_full(s->ctx, DP_FLOAT32, &one, 1, 42.0, cpu_dev(0), &count));
  ASSERT_OK(dp_module_register_buffer(m, "count", count));
  ASSERT_OK(dp_module_linear(s->ctx, 2, 2, 1, cpu_dev(0), &lin));
  ASSERT_OK(dp_module_register_child(m, "lin", lin));
  char path[256];
  path_in(s, "counted.safetensors", path, sizeof path);
  ASSERT_OK(dp_checkpoint_save(m, NULL, path, NULL, 0));
  const float one_value = 1.0f;
  ASSERT_OK(dp_tensor_copy_from_host(count, &one_value, sizeof one_value));

  const dp_device devices[2] = {cpu_dev(0), cpu_dev(1)};
  dp_module* replicas[2] = {NULL, NULL};
  ASSERT_OK(dp_replicate(m, devices, 2, replicas));
  assert_true(first_value(replicas[1], "count") == 1.0f);
  assert_int_equal(dp_module_load(replicas[1], path), DP_ERR_STATE);
  assert_non_null(strstr(dp_last_error(), "cpu:1"));
  assert_true(first_value(replicas[1], "count") == 1.0f);
  assert_int_equal(dp_checkpoint_load(replicas[1], NULL, path), DP_ERR_STATE);
  assert_true(first_value(replicas[1], "count") == 1.0f);

  dp_module_release(replicas[0]);
  dp_module_release(replicas[1]);
  dp_tensor_release(count);
  dp_module_release(lin);
  dp_module_release(m);
}

/* An optimizer's state is saved under its parameters' positions: one over another
   model's parameters made a file neither model could load. Refused, naming opt, before a
   file is written or read; an optimizer over some of the module's parameters (a child's)
   is fine. */
static void an_optimizer_of_another_model_is_refused_before_any_file_is_touched(void** state) {
  suite* s = (suite*)*state;
  dp_module *a = NULL, *b = NULL, *seq = NULL;
  ASSERT_OK(dp_module_linear(s->ctx, 3, 4, 1, cpu_dev(0), &a));
  ASSERT_OK(dp_module_linear(s->ctx, 3, 5, 1, cpu_dev(0), &b));
  dp_optimizer* oa = NULL;
  ASSERT_OK(dp_optimizer_adam(a, NULL, &oa));
  char path[256], b_path[256];
  path_in(s, "mixed.safetensors", path, sizeof path);
  ASSERT_ERROR(dp_checkpoint_save(b, oa, path, NULL, 0), DP_ERR_INVALID_ARGUMENT,
               "opt: its parameter 0 (shape [4, 3]) is not a parameter of the module (Linear)");
  assert_int_equal(access(path, F_OK), -1);
  path_in(s, "b.safetensors", b_path, sizeof b_path);
  ASSERT_OK(dp_checkpoint_save(b, NULL, b_path, NULL, 0));
  ASSERT_ERROR(dp_checkpoint_load(b, oa, b_path), DP_ERR_INVALID_ARGUMENT,
               "opt: its parameter 0 (shape [4, 3]) is not a parameter of the module");
  /* An optimizer over a child of the saved module. */
  ASSERT_OK(dp_module_sequential(s->ctx, &seq));
  ASSERT_OK(dp_module_append(seq, b));
  ASSERT_OK(dp_module_append(seq, a));
  ASSERT_OK(dp_checkpoint_save(seq, oa, path, NULL, 0));
  ASSERT_OK(dp_checkpoint_load(seq, oa, path));
  dp_optimizer_release(oa);
  dp_module_release(seq);
  dp_module_release(b);
  dp_module_release(a);
}

/* A Linear(1, 1) without bias checkpoint whose metadata is `metadata_json` (a JSON object's
   members), with the weight 0.5. */
static void write_linear_1x1_checkpoint(const char* path, const char* metadata_json) {
  char header[512];
  snprintf(header, sizeof header,
           "{\"__metadata__\":{%s},"
           "\"weight\":{\"dtype\":\"F32\",\"shape\":[1,1],\"data_offsets\":[0,4]}}",
           metadata_json);
  write_safetensors(path, NULL, 0, header);
  FILE* f = fopen(path, "ab");
  if (f == NULL) fail_msg("cannot append to %s", path);
  const float w = 0.5f;
  fwrite(&w, sizeof w, 1, f);
  fclose(f);
}

/* A Linear(1, 1) without bias on cpu:0 and an SGD over it. */
static void linear_1x1_with_sgd(const suite* s, const dp_sgd_options* so, dp_module** lin,
                                dp_optimizer** opt) {
  ASSERT_OK(dp_module_linear(s->ctx, 1, 1, 0, cpu_dev(0), lin));
  ASSERT_OK(dp_optimizer_sgd(*lin, so, opt));
}

/* A schedule changes the optimizer's learning rate; a checkpoint keeps the rate it had, as
   PyTorch's optimizer state_dict does, and a load puts it back. */
static void a_checkpoint_restores_the_optimizers_learning_rate(void** state) {
  suite* s = (suite*)*state;
  dp_sgd_options so = DP_SGD_OPTIONS_INIT;
  so.momentum = 0.9;
  dp_module* lin = NULL;
  dp_optimizer* opt = NULL;
  linear_1x1_with_sgd(s, &so, &lin, &opt);
  const double scheduled = 0.1 / 3; /* not a short decimal: the text must round-trip */
  ASSERT_OK(dp_optimizer_set_lr(opt, scheduled));
  char path[256];
  path_in(s, "lr.safetensors", path, sizeof path);
  ASSERT_OK(dp_checkpoint_save(lin, opt, path, NULL, 0));
  ASSERT_OK(dp_optimizer_set_lr(opt, 0.5));
  ASSERT_OK(dp_checkpoint_load(lin, opt, path));
  double lr = 0;
  ASSERT_OK(dp_optimizer_lr(opt, &lr));
  assert_true(lr == scheduled);
  char text[64];
  ASSERT_OK(dp_checkpoint_metadata(path, "optimizer_lr", text, sizeof text, NULL));
  assert_true(strtod(text, NULL) == scheduled);

  /* The key is the library's: metadata may repeat it but not contradict it. */
  dp_metadata_entry other = {"optimizer_lr", "1"};
  ASSERT_ERROR(dp_checkpoint_save(lin, opt, path, &other, 1), DP_ERR_INVALID_ARGUMENT,
               "metadata \"optimizer_lr\" = \"1\" contradicts the library's own");

  /* A file from before the key restores the state and leaves the rate alone. */
  write_linear_1x1_checkpoint(path, "\"format\":\"pt\",\"optimizer\":\"sgd\"");
  ASSERT_OK(dp_optimizer_set_lr(opt, 0.5));
  ASSERT_OK(dp_checkpoint_load(lin, opt, path));
  ASSERT_OK(dp_optimizer_lr(opt, &lr));
  assert_true(lr == 0.5);

  /* A rate that is not one is refused before anything changes. */
  const char* bad[] = {"fast", "-1", "inf", "nan", "", "0.1x", "1e999", " 0.1", "+0.1", "0x1p-3"};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; ++i) {
    char meta[128];
    snprintf(meta, sizeof meta, "\"optimizer\":\"sgd\",\"optimizer_lr\":\"%s\"", bad[i]);
    write_linear_1x1_checkpoint(path, meta);
    char needle[64];
    snprintf(needle, sizeof needle, "optimizer_lr = \"%s\" is not a learning rate", bad[i]);
    ASSERT_ERROR(dp_checkpoint_load(lin, opt, path), DP_ERR_FORMAT, needle);
    ASSERT_OK(dp_optimizer_lr(opt, &lr));
    assert_true(lr == 0.5);
    dp_tensor* w = NULL;
    ASSERT_OK(dp_module_get(lin, "weight", &w));
    float got = 0;
    read_f32(w, &got, 1);
    assert_true(got == 0.5f); /* the previous file's weight: this one's was not loaded */
    dp_tensor_release(w);
  }
  dp_optimizer_release(opt);
  dp_module_release(lin);
}

/* A JVM sets LC_NUMERIC from the environment, and a Python program may call setlocale:
   under a decimal-comma locale a checkpoint must still record "0.05", and files must load
   across locales. de_DE is compiled into the suite's directory (Debian's locales). */
static void the_learning_rate_text_does_not_follow_the_locale(void** state) {
  suite* s = (suite*)*state;
  char cmd[512];
  snprintf(cmd, sizeof cmd, "localedef -c -i de_DE -f UTF-8 %s/de_DE.UTF-8 >/dev/null 2>&1",
           s->dir);
  (void)system(cmd); /* it may warn (exit 1) and still write the locale */
  setenv("LOCPATH", s->dir, 1);
  if (setlocale(LC_NUMERIC, "de_DE.UTF-8") == NULL)
    fail_msg("no de_DE.UTF-8 locale from localedef (scripts/install-deps.sh installs locales)");
  char probe[16];
  snprintf(probe, sizeof probe, "%g", 0.5);
  assert_string_equal(probe, "0,5"); /* the locale is in force */

  dp_sgd_options so = DP_SGD_OPTIONS_INIT;
  so.lr = 0.05;
  dp_module* lin = NULL;
  dp_optimizer* opt = NULL;
  linear_1x1_with_sgd(s, &so, &lin, &opt);
  char comma_path[256], c_path[256];
  path_in(s, "comma.safetensors", comma_path, sizeof comma_path);
  path_in(s, "c.safetensors", c_path, sizeof c_path);
  ASSERT_OK(dp_checkpoint_save(lin, opt, comma_path, NULL, 0));
  char text[64];
  ASSERT_OK(dp_checkpoint_metadata(comma_path, "optimizer_lr", text, sizeof text, NULL));
  assert_string_equal(text, "0.05");
  ASSERT_OK(dp_optimizer_set_lr(opt, 1e-310)); /* subnormal: still read back exactly */
  ASSERT_OK(dp_checkpoint_save(lin, opt, c_path, NULL, 0));
  ASSERT_OK(dp_checkpoint_load(lin, opt, comma_path));
  double lr = 0;
  ASSERT_OK(dp_optimizer_lr(opt, &lr));
  assert_true(lr == 0.05);

  setlocale(LC_NUMERIC, "C");
  unsetenv("LOCPATH");
  ASSERT_OK(dp_checkpoint_load(lin, opt, c_path)); /* written under de_DE, read under C */
  ASSERT_OK(dp_optimizer_lr(opt, &lr));
  assert_true(lr == 1e-310);
  ASSERT_OK(dp_checkpoint_load(lin, opt, comma_path));
  ASSERT_OK(dp_optimizer_lr(opt, &lr));
  assert_true(lr == 0.05);
  /* A pair that repeats the rate in other words repeats it. */
  dp_metadata_entry same = {"optimizer_lr", "5e-2"};
  ASSERT_OK(dp_checkpoint_save(lin, opt, c_path, &same, 1));
  dp_optimizer_release(opt);
  dp_module_release(lin);
  snprintf(cmd, sizeof cmd, "rm -rf %s/de_DE.UTF-8", s->dir);
  assert_int_equal(system(cmd), 0);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(save_then_load_restores_exact_values_into_a_fresh_module),
      cmocka_unit_test(an_optimizer_of_another_model_is_refused_before_any_file_is_touched),
      cmocka_unit_test(save_then_load_restores_buffers_and_the_int64_batch_count),
      cmocka_unit_test(saved_file_is_plain_safetensors_with_every_entry_in_order),
      cmocka_unit_test(plain_writer_file_loads_into_a_c_built_mlp_and_gives_pytorchs_output),
      cmocka_unit_test(the_test_writer_makes_files_that_load),
      cmocka_unit_test(truncated_files_are_rejected_and_change_nothing),
      cmocka_unit_test(a_header_length_beyond_the_file_is_rejected),
      cmocka_unit_test(headers_that_are_not_a_json_object_are_rejected),
      cmocka_unit_test(entries_with_a_bad_dtype_are_rejected),
      cmocka_unit_test(entries_whose_shape_and_offsets_disagree_are_rejected),
      cmocka_unit_test(files_of_another_model_are_rejected_naming_the_entry),
      cmocka_unit_test(unreadable_paths_give_an_io_error),
      cmocka_unit_test(a_header_length_cut_into_its_padding_is_rejected),
      cmocka_unit_test(a_directory_is_unreadable_and_gives_an_io_error),
      cmocka_unit_test(metadata_reads_any_header_and_refuses_a_nul_in_the_value),
      cmocka_unit_test(a_load_refused_part_way_changes_nothing),
      cmocka_unit_test(a_checkpoint_restores_the_optimizers_learning_rate),
      cmocka_unit_test(the_learning_rate_text_does_not_follow_the_locale),
  };
  return cmocka_run_group_tests_name("checkpoint", tests, setup, teardown);
}
