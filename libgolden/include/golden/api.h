/* The export macro of libgolden's closed ABI: the library is built with hidden visibility,
 * and exactly the declarations of the public headers that carry GOLDEN_API are exported. */
#ifndef GOLDEN_API_H
#define GOLDEN_API_H

#ifndef GOLDEN_API
#if defined(__GNUC__) || defined(__clang__)
#define GOLDEN_API __attribute__((visibility("default")))
#else
#define GOLDEN_API
#endif
#endif

#endif
