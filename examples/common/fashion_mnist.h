/* Fashion-MNIST from its four IDX files (Debian's dataset-fashion-mnist installs them in
   /usr/share/datasets/fashion-mnist): pixels as stored (one byte each, 0-255), int64
   labels. A model's input is pixel / 255 in float32 (fashion_pixels_to_float), made when
   a batch is assembled: a byte a pixel keeps the training set at 47 MB instead of 188 MB,
   and a batch reads a quarter of the memory it would read as floats. */
#ifndef DP_EXAMPLES_FASHION_MNIST_H_
#define DP_EXAMPLES_FASHION_MNIST_H_

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define FASHION_MNIST_DEFAULT_DIR "/usr/share/datasets/fashion-mnist"
#define FASHION_PIXELS 784
#define FASHION_CLASSES 10

typedef struct fashion_split {
  uint8_t* pixels; /* n * 784, row-major, 0-255 */
  int64_t* labels; /* n, in [0, 10) */
  size_t n;
} fashion_split;

typedef struct fashion_mnist {
  fashion_split train, test;
} fashion_mnist;

/* Loads dir/{train,t10k}-{images-idx3,labels-idx1}-ubyte.gz. train_limit > 0 keeps the
   first train_limit training samples. 0 on success; else -1 and a message naming the
   file and the problem in err. */
int fashion_mnist_load(const char* dir, size_t train_limit, fashion_mnist* out, char* err,
                       size_t err_size);
/* The test split alone (dir/t10k-*), for evaluating a model: the training files need not
   exist. out->train is left empty (n == 0). Returns as fashion_mnist_load. */
int fashion_mnist_load_test(const char* dir, fashion_mnist* out, char* err, size_t err_size);
void fashion_mnist_free(fashion_mnist* d);

/* dst[i] = pixels[i] / 255 in float32 for i < count: the values torch_reference.py feeds
   its models (a float32 division, so the same bits). dst and pixels must not overlap. */
void fashion_pixels_to_float(float* dst, const uint8_t* pixels, size_t count);

#ifdef __cplusplus
}
#endif

#endif /* DP_EXAMPLES_FASHION_MNIST_H_ */
