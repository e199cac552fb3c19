#include "fabric/ucx/cluster_key.h"

#include <fcntl.h>
#include <pwd.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <vector>

namespace dmindex::fabric::ucx {
namespace {

constexpr size_t kMinSecretBytes = 16;
constexpr size_t kMaxKeyFileBytes = 4096;
constexpr size_t kNewSecretBytes = 32;  // written as 64 hex digits

void FillRandom(void* out, size_t n) {
  auto* p = static_cast<char*>(out);
  while (n > 0) {
    ssize_t got = getrandom(p, n, 0);
    if (got < 0) {
      if (errno == EINTR) continue;
      std::abort();  // no entropy: signing with predictable nonces would be worse than dying
    }
    p += got;
    n -= static_cast<size_t>(got);
  }
}

std::string Errno(const std::string& what, const std::string& path) {
  return what + " " + path + ": " + std::strerror(errno);
}

// Writes a fresh random key to `path` unless a key is there already. Racing processes
// (several servers and clients started at once on a new machine) end up with one key: each
// writes its own temporary file, and only the first link() to the final name succeeds.
Status CreateKeyFile(const std::string& path) {
  const std::string dir = path.substr(0, path.rfind('/'));
  if (mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST)
    return Status::IoError(Errno("cannot create the directory", dir));
  std::string tmp = path + ".XXXXXX";
  int fd = mkstemp(tmp.data());
  if (fd < 0) return Status::IoError(Errno("cannot create a cluster key in", dir));
  uint8_t secret[kNewSecretBytes];
  FillRandom(secret, sizeof secret);
  std::string hex;
  for (uint8_t b : secret) {
    static constexpr char kDigits[] = "0123456789abcdef";
    hex += kDigits[b >> 4];
    hex += kDigits[b & 15];
  }
  hex += '\n';
  const bool written = fchmod(fd, 0600) == 0 &&
                       write(fd, hex.data(), hex.size()) == static_cast<ssize_t>(hex.size()) &&
                       fsync(fd) == 0;
  close(fd);
  Status s = Status::Ok();
  if (!written) s = Status::IoError(Errno("cannot write the cluster key", tmp));
  else if (link(tmp.c_str(), path.c_str()) != 0 && errno != EEXIST)
    s = Status::IoError(Errno("cannot create the cluster key", path));
  unlink(tmp.c_str());
  return s;
}

Result<std::string> ReadKeyFile(const std::string& path) {
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return Status::InvalidArgument(Errno("cannot open the cluster key", path));
  struct stat st {};
  std::string contents(kMaxKeyFileBytes + 1, '\0');
  ssize_t n = -1;
  if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && (st.st_mode & 077) == 0)
    n = read(fd, contents.data(), contents.size());
  close(fd);
  if (!S_ISREG(st.st_mode)) return Status::InvalidArgument("cluster key " + path + " is not a regular file");
  if ((st.st_mode & 077) != 0)
    return Status::InvalidArgument("cluster key " + path + " may be read by others (mode 0" +
                                   std::to_string((st.st_mode >> 6) & 7) +
                                   std::to_string((st.st_mode >> 3) & 7) +
                                   std::to_string(st.st_mode & 7) + "): chmod 600 it");
  if (n < 0) return Status::IoError(Errno("cannot read the cluster key", path));
  if (static_cast<size_t>(n) > kMaxKeyFileBytes)
    return Status::InvalidArgument("cluster key " + path + " is longer than 4096 bytes");
  contents.resize(static_cast<size_t>(n));
  const auto first = contents.find_first_not_of(" \t\r\n");
  const auto last = contents.find_last_not_of(" \t\r\n");
  contents = first == std::string::npos ? "" : contents.substr(first, last - first + 1);
  if (contents.size() < kMinSecretBytes)
    return Status::InvalidArgument("cluster key " + path + " is shorter than " +
                                   std::to_string(kMinSecretBytes) + " bytes");
  return contents;
}

}  // namespace

std::string DefaultClusterKeyPath() {
  const char* home = std::getenv("HOME");
  if (home == nullptr || *home == '\0') {
    // Services and CI jobs may run without HOME: the account's home directory then.
    const passwd* pw = getpwuid(getuid());
    home = pw != nullptr ? pw->pw_dir : nullptr;
  }
  if (home == nullptr || *home == '\0') return "";
  return std::string(home) + "/.dmindex/cluster-key";
}

Result<ClusterKey> ClusterKey::Load(const std::string& given) {
  std::string path = given;
  if (path.empty()) {
    path = DefaultClusterKeyPath();
    if (path.empty())
      return Status::InvalidArgument("no cluster key: no home directory, so give --cluster-key FILE");
    struct stat st {};
    if (stat(path.c_str(), &st) != 0) DMX_RETURN_IF_ERROR(CreateKeyFile(path));
  }
  auto secret = ReadKeyFile(path);
  if (!secret.ok()) return secret.status();
  ClusterKey key = FromSecret(std::move(secret).value());
  key.source_ = path;
  return key;
}

ClusterKey ClusterKey::FromSecret(std::string secret) {
  ClusterKey key;
  key.secret_ = std::move(secret);
  key.source_ = "(given)";
  return key;
}

Mac ClusterKey::Sign(std::initializer_list<std::span<const std::byte>> parts) const {
  std::vector<unsigned char> message;
  for (auto part : parts) {
    auto* p = reinterpret_cast<const unsigned char*>(part.data());
    message.insert(message.end(), p, p + part.size());
  }
  Mac mac{};
  unsigned int len = 0;
  if (HMAC(EVP_sha256(), secret_.data(), static_cast<int>(secret_.size()), message.data(),
           message.size(), mac.data(), &len) == nullptr ||
      len != mac.size())
    std::abort();  // libcrypto without SHA-256: nothing could be authenticated
  return mac;
}

bool SameMac(const Mac& a, const Mac& b) { return CRYPTO_memcmp(a.data(), b.data(), a.size()) == 0; }

Nonce RandomNonce() {
  Nonce n;
  FillRandom(n.data(), n.size());
  return n;
}

}  // namespace dmindex::fabric::ucx
