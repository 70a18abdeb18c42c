/* A library for the target-root escape test: PLACE names where it lives. */
int PLACE(int x)
{
	return x + 1;
}
