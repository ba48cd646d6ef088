//===- Npy.cpp - NumPy .npy read / write ----------------------------------===//
//
// The .npy format (numpy.lib.format): "\x93NUMPY", major, minor, a header
// length (uint16 for 1.0, uint32 for 2.0 / 3.0), then a Python dict literal
//   {'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }
// padded with spaces and a newline to a multiple of 64 bytes, then the raw
// data. Only little-endian, C-order arrays of the mgrt_dtype types.
//
//===----------------------------------------------------------------------===//

#include "megagraph/Runtime.h"

#include "support/Error.h"

#include <cctype>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <sys/stat.h>

namespace {

const char kMagic[] = "\x93NUMPY";
constexpr size_t kMagicLen = 6;

struct DtypeCode {
  const char *descr; // as numpy writes it
  int dtype;
};
const DtypeCode kDtypes[] = {
    {"<f4", MGRT_F32},  {"<f8", MGRT_F64}, {"<i8", MGRT_I64}, {"<i4", MGRT_I32},
    {"|b1", MGRT_BOOL}, {"|u1", MGRT_U8},  {"|i1", MGRT_I8},
};

/// Maps a descr to a dtype; one-byte types may use any byte-order mark.
int dtypeOfDescr(const std::string &d) {
  for (const DtypeCode &c : kDtypes) {
    if (d == c.descr)
      return c.dtype;
    if (c.descr[0] == '|' && d.size() == 3 && (d[0] == '<' || d[0] == '=') &&
        d.compare(1, 2, c.descr + 1) == 0)
      return c.dtype;
  }
  return 0;
}

const char *descrOfDtype(int dtype) {
  for (const DtypeCode &c : kDtypes)
    if (c.dtype == dtype)
      return c.descr;
  return nullptr;
}

/// Minimal parser of the header dict: finds a key and the text of its value.
class HeaderDict {
public:
  explicit HeaderDict(std::string text) : text(std::move(text)) {}

  /// Position just after "'key':" (or "\"key\":") and spaces; npos if absent.
  size_t valueOf(const char *key) const {
    for (const char quote : {'\'', '"'}) {
      std::string k = std::string(1, quote) + key + quote;
      size_t at = text.find(k);
      if (at == std::string::npos)
        continue;
      at += k.size();
      at = skipSpaces(at);
      if (at >= text.size() || text[at] != ':')
        return std::string::npos;
      return skipSpaces(at + 1);
    }
    return std::string::npos;
  }

  bool quoted(size_t at, std::string &out) const {
    if (at >= text.size() || (text[at] != '\'' && text[at] != '"'))
      return false;
    size_t end = text.find(text[at], at + 1);
    if (end == std::string::npos)
      return false;
    out = text.substr(at + 1, end - at - 1);
    return true;
  }

  bool startsWith(size_t at, const char *word) const {
    return text.compare(at, std::strlen(word), word) == 0;
  }

  /// Parses "(d0, d1, )" into shape; false on syntax errors.
  bool tuple(size_t at, int64_t *shape, int &rank, bool &tooLong) const {
    rank = 0;
    tooLong = false;
    if (at >= text.size() || text[at] != '(')
      return false;
    ++at;
    for (;;) {
      at = skipSpaces(at);
      if (at >= text.size())
        return false;
      if (text[at] == ')')
        return true;
      if (!std::isdigit(static_cast<unsigned char>(text[at])))
        return false;
      int64_t v = 0;
      while (at < text.size() &&
             std::isdigit(static_cast<unsigned char>(text[at]))) {
        if (v > (INT64_MAX - 9) / 10)
          return false;
        v = v * 10 + (text[at++] - '0');
      }
      if (at < text.size() && text[at] == 'L') // Python 2 longs
        ++at;
      if (rank >= MGRT_MAX_RANK)
        tooLong = true;
      else
        shape[rank] = v;
      ++rank;
      at = skipSpaces(at);
      if (at < text.size() && text[at] == ',')
        ++at;
      else if (at >= text.size() || text[at] != ')')
        return false;
    }
  }

private:
  size_t skipSpaces(size_t at) const {
    while (at < text.size() && (text[at] == ' ' || text[at] == '\t'))
      ++at;
    return at;
  }
  std::string text;
};

/// Closes a FILE on every path out.
struct File {
  std::FILE *f;
  explicit File(std::FILE *f) : f(f) {}
  ~File() {
    if (f)
      std::fclose(f);
  }
};

} // namespace

extern "C" int mgrt_npy_read(const char *path, mgrt_tensor *out, char *err,
                             size_t errlen) {
  if (!path || !out)
    return mgrt::errorInto(err, errlen, MGRT_ERR_ARGUMENT, "null argument");
  std::memset(out, 0, sizeof *out);
  File file(std::fopen(path, "rb"));
  if (!file.f)
    return mgrt::errorInto(err, errlen, MGRT_ERR_IO, "%s: cannot open: %s",
                           path, std::strerror(errno));

  unsigned char pre[kMagicLen + 2];
  if (std::fread(pre, 1, sizeof pre, file.f) != sizeof pre ||
      std::memcmp(pre, kMagic, kMagicLen) != 0)
    return mgrt::errorInto(err, errlen, MGRT_ERR_FORMAT,
                           "%s: not a .npy file (bad magic string)", path);
  const int major = pre[kMagicLen], minor = pre[kMagicLen + 1];
  size_t headerLen = 0;
  if (major == 1) {
    unsigned char b[2];
    if (std::fread(b, 1, 2, file.f) != 2)
      return mgrt::errorInto(err, errlen, MGRT_ERR_FORMAT,
                             "%s: truncated header", path);
    headerLen = b[0] | (size_t)b[1] << 8;
  } else if (major == 2 || major == 3) {
    unsigned char b[4];
    if (std::fread(b, 1, 4, file.f) != 4)
      return mgrt::errorInto(err, errlen, MGRT_ERR_FORMAT,
                             "%s: truncated header", path);
    headerLen =
        b[0] | (size_t)b[1] << 8 | (size_t)b[2] << 16 | (size_t)b[3] << 24;
  } else {
    return mgrt::errorInto(err, errlen, MGRT_ERR_UNSUPPORTED,
                           "%s: unsupported .npy format version %d.%d", path,
                           major, minor);
  }
  if (headerLen > (1u << 24))
    return mgrt::errorInto(err, errlen, MGRT_ERR_FORMAT,
                           "%s: implausible header length %zu", path,
                           headerLen);
  std::string text(headerLen, '\0');
  if (std::fread(&text[0], 1, headerLen, file.f) != headerLen)
    return mgrt::errorInto(err, errlen, MGRT_ERR_FORMAT, "%s: truncated header",
                           path);
  HeaderDict dict(text);

  std::string descr;
  if (!dict.quoted(dict.valueOf("descr"), descr))
    return mgrt::errorInto(err, errlen, MGRT_ERR_FORMAT,
                           "%s: header has no 'descr'", path);
  size_t fo = dict.valueOf("fortran_order");
  bool fortran;
  if (fo != std::string::npos && dict.startsWith(fo, "True"))
    fortran = true;
  else if (fo != std::string::npos && dict.startsWith(fo, "False"))
    fortran = false;
  else
    return mgrt::errorInto(err, errlen, MGRT_ERR_FORMAT,
                           "%s: header has no valid 'fortran_order'", path);
  int64_t shape[MGRT_MAX_RANK] = {0};
  int rank = 0;
  bool tooLong = false;
  if (!dict.tuple(dict.valueOf("shape"), shape, rank, tooLong))
    return mgrt::errorInto(err, errlen, MGRT_ERR_FORMAT,
                           "%s: header has no valid 'shape'", path);
  if (tooLong)
    return mgrt::errorInto(err, errlen, MGRT_ERR_UNSUPPORTED,
                           "%s: rank %d exceeds the maximum of %d", path, rank,
                           MGRT_MAX_RANK);

  const int dtype = dtypeOfDescr(descr);
  if (!dtype) {
    if (!descr.empty() && descr[0] == '>')
      return mgrt::errorInto(err, errlen, MGRT_ERR_UNSUPPORTED,
                             "%s: big-endian dtype '%s' is not supported", path,
                             descr.c_str());
    return mgrt::errorInto(
        err, errlen, MGRT_ERR_UNSUPPORTED,
        "%s: unsupported dtype '%s' (supported: <f4 <f8 <i8 <i4 |b1 "
        "|u1 |i1)",
        path, descr.c_str());
  }
  int nonTrivial = 0;
  for (int i = 0; i < rank; ++i)
    nonTrivial += shape[i] != 1;
  if (fortran && nonTrivial > 1)
    return mgrt::errorInto(
        err, errlen, MGRT_ERR_UNSUPPORTED,
        "%s: Fortran-order arrays are not supported (save a C-order "
        "array, e.g. numpy.ascontiguousarray)",
        path);

  // The data must fill the rest of the file exactly: checked before the
  // array is allocated, so a corrupt shape cannot ask for more memory than
  // the file holds.
  size_t bytes = mgrt_dtype_size(dtype);
  for (int i = 0; i < rank; ++i) {
    if (shape[i] != 0 && bytes > SIZE_MAX / (size_t)shape[i])
      return mgrt::errorInto(err, errlen, MGRT_ERR_FORMAT,
                             "%s: the shape's size overflows", path);
    bytes *= (size_t)shape[i];
  }
  const long dataStart = std::ftell(file.f);
  struct stat sb;
  if (dataStart < 0 || ::fstat(::fileno(file.f), &sb) != 0)
    return mgrt::errorInto(err, errlen, MGRT_ERR_IO, "%s: cannot stat: %s",
                           path, std::strerror(errno));
  if (S_ISREG(sb.st_mode)) {
    const size_t left = sb.st_size > dataStart
                            ? static_cast<size_t>(sb.st_size - dataStart)
                            : 0;
    if (left < bytes)
      return mgrt::errorInto(
          err, errlen, MGRT_ERR_FORMAT,
          "%s: truncated data: expected %zu bytes, found %zu", path, bytes,
          left);
    if (left > bytes)
      return mgrt::errorInto(err, errlen, MGRT_ERR_FORMAT,
                             "%s: %zu bytes after the data (the shape says "
                             "%zu bytes of %s)",
                             path, left - bytes, bytes, descr.c_str());
  }

  mgrt_status st = mgrt_tensor_alloc(out, dtype, rank, shape);
  if (st != MGRT_OK)
    return mgrt::errorInto(err, errlen, st, "%s: cannot allocate the array",
                           path);
  const size_t got = std::fread(out->data, 1, bytes, file.f);
  if (got != bytes) {
    mgrt_tensor_free(out);
    return mgrt::errorInto(err, errlen, MGRT_ERR_FORMAT,
                           "%s: truncated data: expected %zu bytes, found %zu",
                           path, bytes, got);
  }
  // Not a regular file (a pipe): nothing may follow the data either.
  if (std::fgetc(file.f) != EOF) {
    mgrt_tensor_free(out);
    return mgrt::errorInto(err, errlen, MGRT_ERR_FORMAT,
                           "%s: bytes after the data (the shape says %zu "
                           "bytes of %s)",
                           path, bytes, descr.c_str());
  }
  return MGRT_OK;
}

extern "C" int mgrt_npy_write(const char *path, const mgrt_tensor *t, char *err,
                              size_t errlen) {
  if (!path || !t)
    return mgrt::errorInto(err, errlen, MGRT_ERR_ARGUMENT, "null argument");
  const char *descr = descrOfDtype(t->dtype);
  if (!descr)
    return mgrt::errorInto(err, errlen, MGRT_ERR_UNSUPPORTED,
                           "%s: cannot write dtype code %d", path, t->dtype);
  if (t->rank < 0 || t->rank > MGRT_MAX_RANK)
    return mgrt::errorInto(err, errlen, MGRT_ERR_ARGUMENT,
                           "%s: invalid rank %d", path, t->rank);
  const int64_t numel = mgrt_tensor_numel(t);
  if (numel < 0 || (numel > 0 && !t->data))
    return mgrt::errorInto(err, errlen, MGRT_ERR_ARGUMENT, "%s: invalid tensor",
                           path);

  std::string header = std::string("{'descr': '") + descr +
                       "', 'fortran_order': False, 'shape': (";
  for (int i = 0; i < t->rank; ++i) {
    header += std::to_string(t->shape[i]);
    header += (t->rank == 1 || i + 1 < t->rank) ? "," : "";
    if (i + 1 < t->rank)
      header += ' ';
  }
  header += "), }";
  // Pad so that magic + version + length + header is a multiple of 64.
  size_t prefix = kMagicLen + 2 + 2;
  bool v2 = header.size() + 1 + 64 > 65535;
  if (v2)
    prefix += 2;
  size_t total = (prefix + header.size() + 1 + 63) / 64 * 64;
  header.append(total - prefix - header.size() - 1, ' ');
  header += '\n';

  File file(std::fopen(path, "wb"));
  if (!file.f)
    return mgrt::errorInto(err, errlen, MGRT_ERR_IO, "%s: cannot create: %s",
                           path, std::strerror(errno));
  std::string pre(kMagic, kMagicLen);
  pre += static_cast<char>(v2 ? 2 : 1);
  pre += '\0';
  const size_t len = header.size();
  pre += static_cast<char>(len & 0xff);
  pre += static_cast<char>((len >> 8) & 0xff);
  if (v2) {
    pre += static_cast<char>((len >> 16) & 0xff);
    pre += static_cast<char>((len >> 24) & 0xff);
  }
  const size_t bytes = mgrt_dtype_size(t->dtype) * (size_t)numel;
  bool ok = std::fwrite(pre.data(), 1, pre.size(), file.f) == pre.size() &&
            std::fwrite(header.data(), 1, len, file.f) == len &&
            (bytes == 0 || std::fwrite(t->data, 1, bytes, file.f) == bytes);
  ok = (std::fclose(file.f) == 0) && ok;
  file.f = nullptr;
  if (!ok)
    return mgrt::errorInto(err, errlen, MGRT_ERR_IO, "%s: write failed: %s",
                           path, std::strerror(errno));
  return MGRT_OK;
}
