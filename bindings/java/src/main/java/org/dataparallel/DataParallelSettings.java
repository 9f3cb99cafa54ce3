package org.dataparallel;

import org.dataparallel.swig.dp_data_parallel_options;

/**
 * The settings of a DataParallel that {@link DataParallel.Builder} and, for the DataParallel
 * inside a rank, {@link DistributedDataParallel.Builder} both hold (PyTorch's defaults), and
 * their copy into the C options. The builders' setters check and document them.
 */
final class DataParallelSettings {
  long[] chunkSizes;
  boolean gather = true;
  boolean cacheReplicas;
  BufferSync bufferSync = BufferSync.NONE;
  boolean aliasCpu = true;
  long bucketBytes;
  DType gradReduceDtype = DType.FLOAT32;

  void copyInto(dp_data_parallel_options o) {
    if (chunkSizes != null) o.set_chunk_sizes(chunkSizes);
    o.setNo_gather(gather ? 0 : 1);
    o.setCache_replicas(cacheReplicas ? 1 : 0);
    o.setBuffer_sync(bufferSync.ordinal());
    o.setAlias_cpu(aliasCpu ? 1 : 0);
    o.setBucket_bytes(bucketBytes);
    o.setGrad_reduce_dtype(gradReduceDtype.value());
  }
}
