#include "stop_signals.h"

#include <signal.h>
#include <string.h>

static volatile sig_atomic_t first_signal, interrupts;

static void request_stop(int signal_number)
{
	if (!first_signal)
		first_signal = signal_number;
	/* The second Ctrl-C: the default action, which ends the process. */
	if (signal_number == SIGINT && ++interrupts == 2)
		signal(SIGINT, SIG_DFL), raise(SIGINT);
}

void stop_signals_install(void)
{
	static const int signals[] = {SIGINT, SIGTERM, SIGHUP, SIGPIPE};
	/* No SA_RESTART: the sampling loop's poll returns at once. */
	struct sigaction action = {.sa_handler = request_stop};

	sigemptyset(&action.sa_mask);
	for (size_t i = 0; i < sizeof(signals) / sizeof(*signals); i++)
		sigaction(signals[i], &action, NULL);
}

bool stop_signals_requested(void)
{
	return first_signal != 0;
}

const char *stop_signals_name(void)
{
	switch (first_signal) {
	case SIGINT:
		return "SIGINT";
	case SIGTERM:
		return "SIGTERM";
	case SIGHUP:
		return "SIGHUP";
	case SIGPIPE:
		return "SIGPIPE";
	}
	return "no signal";
}
