// A C++ library: its symbols are mangled and must come out demangled.
#include <vector>

namespace demo {
template <typename T> struct Widget {
	__attribute__((noinline)) T spin(T x)
	{
		std::vector<T> values(16, x);
		T total = 0;
		for (T value : values)
			total += value;
		return total;
	}
};

int run(int x)
{
	return Widget<int>().spin(x);
}
} // namespace demo
