/* Hashes and encrypts with OpenSSL, each algorithm on a call path of its
 * own, in turns: SHA-512, SHA-256, AES-256-GCM and ChaCha20-Poly1305 over
 * 64 KiB buffers. OpenSSL's hand-written code for them (SHA-NI, AVX2,
 * SSSE3, AES-NI bodies, picked by CPUID or OPENSSL_ia32cap) keeps its CFA
 * in other registers and in DWARF expressions. Built without frame
 * pointers: only CFI finds the callers. Runs for argv[1] seconds. */
#include <openssl/evp.h>
#include <stdlib.h>
#include <time.h>

#define BUFFER_SIZE (64 * 1024)

static unsigned char input[BUFFER_SIZE], output[BUFFER_SIZE + 64];
static volatile unsigned sink;

__attribute__((noipa)) static void digest(const EVP_MD *type)
{
	unsigned char hash[EVP_MAX_MD_SIZE];
	unsigned length;

	EVP_Digest(input, sizeof(input), hash, &length, type, NULL);
	sink += hash[0];
}

/* Encrypts the buffer `rounds` times: AES-GCM, with AES-NI, takes a
 * fraction of ChaCha20's time. */
__attribute__((noipa)) static void seal(const EVP_CIPHER *type, int rounds)
{
	static const unsigned char key[32], nonce[12];
	EVP_CIPHER_CTX *context = EVP_CIPHER_CTX_new();
	int length;

	EVP_EncryptInit_ex(context, type, NULL, key, nonce);
	for (int i = 0; i < rounds; i++)
		EVP_EncryptUpdate(context, output, &length, input, sizeof(input));
	EVP_EncryptFinal_ex(context, output + length, &length);
	EVP_CIPHER_CTX_free(context);
	sink += output[0];
}

/* Each keeps its frame: no tail call to digest() or seal(). */
__attribute__((noipa)) static void hash_sha512(void)
{
	digest(EVP_sha512());
	sink++;
}

__attribute__((noipa)) static void hash_sha256(void)
{
	digest(EVP_sha256());
	sink++;
}

__attribute__((noipa)) static void seal_aes_gcm(void)
{
	seal(EVP_aes_256_gcm(), 8);
	sink++;
}

__attribute__((noipa)) static void seal_chacha20(void)
{
	seal(EVP_chacha20_poly1305(), 1);
	sink++;
}

static double now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	double end = now() + (argc > 1 ? atof(argv[1]) : 1e9);

	for (size_t i = 0; i < sizeof(input); i++)
		input[i] = (unsigned char)i;
	while (now() < end) {
		hash_sha512();
		hash_sha256();
		seal_aes_gcm();
		seal_chacha20();
	}
	return 0;
}
