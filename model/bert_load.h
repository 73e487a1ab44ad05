/*
 * bert_load.h — the BERT mapping of model/bert_load.c over a buffer, for
 * attn_bert_load (over the file's mapping) and fuzz/fuzz_model.c.
 */
#ifndef ATTN_MODEL_BERT_LOAD_H
#define ATTN_MODEL_BERT_LOAD_H

#include <stddef.h>

#include "attn.h"

/* attn_bert_load's work on the bytes of a safetensors file, buf[0, size):
 * the model's F32 tensors point into buf, which must outlive it (the model
 * does not own buf; attn_bert_free frees the rest). Statuses as
 * attn_bert_load's; the message in err does not name a path. */
attn_status attn_bert_from_buffer(attn_bert **model, const void *buf, size_t size, int n_heads,
                                  char *err, size_t err_len);

#endif /* ATTN_MODEL_BERT_LOAD_H */
