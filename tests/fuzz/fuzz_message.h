/* fuzz_message.h: the input format of fuzz_message.c, shared with its
 * corpus generator (make_corpus.py says the same in Python).
 *
 * An input is a list of ZeroMQ frames separated by the two bytes 0xFF 0x00
 * (0xFF never occurs in UTF-8 JSON, so seeds stay readable): "a\xff\x00b" is
 * the frames "a" and "b"; an empty input is one empty frame. Messages are
 * signed with FUZZ_KEY. */
#ifndef FUZZ_MESSAGE_H
#define FUZZ_MESSAGE_H

#define FUZZ_KEY "f0e1d2c3b4a5968778695a4b3c2d1e0ff0e1d2c3b4a5968778695a4b3c2d1e0f"
#define FUZZ_SEP0 0xFF
#define FUZZ_SEP1 0x00

#endif
