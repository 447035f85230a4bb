/* The one clock for deadlines and timings: monotonic milliseconds. */
#ifndef CLOCK_H
#define CLOCK_H

long long mono_ms(void);

#endif
