package charset

import (
	"golang.org/x/text/encoding/charmap"
	"golang.org/x/text/encoding/japanese"
	"golang.org/x/text/encoding/korean"
	"golang.org/x/text/encoding/simplifiedchinese"
	"golang.org/x/text/encoding/traditionalchinese"
	"golang.org/x/text/encoding/unicode"
)

// ianaEncoding is the encoding an IANA charset name or alias (in lower case)
// names, among those x/text implements; nil for any other name. The names
// are those of x/text's ianaindex (v0.23.0), written out as a switch: the
// index builds a map of ~900 names at package init, which cost every run of
// the connector ~0.5 ms before it did anything (README, dependency notes).
func ianaEncoding(name string) decodable {
	switch name {
	case "ansi_x3.4-1968", "ansi_x3.4-1986", "cp367", "csascii", "ibm367", "iso-ir-6", "iso646-us", "iso_646.irv:1991", "us", "us-ascii":
		return asciiEncoding{}
	case "csutf16be", "utf-16be":
		return unicode.UTF16(unicode.BigEndian, unicode.IgnoreBOM)
	case "csutf16", "utf-16":
		return unicode.UTF16(unicode.BigEndian, unicode.UseBOM)
	case "csutf16le", "utf-16le":
		return unicode.UTF16(unicode.LittleEndian, unicode.IgnoreBOM)
	case "cp037", "csibm037", "ebcdic-cp-ca", "ebcdic-cp-nl", "ebcdic-cp-us", "ebcdic-cp-wt", "ibm037":
		return charmap.CodePage037
	case "csibm1047", "ibm-1047", "ibm1047":
		return charmap.CodePage1047
	case "ccsid01140", "cp01140", "csibm01140", "ebcdic-us-37+euro", "ibm01140":
		return charmap.CodePage1140
	case "437", "cp437", "cspc8codepage437", "ibm437":
		return charmap.CodePage437
	case "850", "cp850", "cspc850multilingual", "ibm850":
		return charmap.CodePage850
	case "852", "cp852", "cspcp852", "ibm852":
		return charmap.CodePage852
	case "855", "cp855", "csibm855", "ibm855":
		return charmap.CodePage855
	case "ccsid00858", "cp00858", "csibm00858", "ibm00858", "pc-multilingual-850+euro":
		return charmap.CodePage858
	case "860", "cp860", "csibm860", "ibm860":
		return charmap.CodePage860
	case "862", "cp862", "cspc862latinhebrew", "ibm862":
		return charmap.CodePage862
	case "863", "cp863", "csibm863", "ibm863":
		return charmap.CodePage863
	case "865", "cp865", "csibm865", "ibm865":
		return charmap.CodePage865
	case "866", "cp866", "csibm866", "ibm866":
		return charmap.CodePage866
	case "cp819", "csisolatin1", "ibm819", "iso-8859-1", "iso-ir-100", "iso_8859-1", "iso_8859-1:1987", "l1", "latin1":
		return charmap.ISO8859_1
	case "csisolatin6", "iso-8859-10", "iso-ir-157", "iso_8859-10:1992", "l6", "latin6":
		return charmap.ISO8859_10
	case "csiso885913", "iso-8859-13":
		return charmap.ISO8859_13
	case "csiso885914", "iso-8859-14", "iso-celtic", "iso-ir-199", "iso_8859-14", "iso_8859-14:1998", "l8", "latin8":
		return charmap.ISO8859_14
	case "csiso885915", "iso-8859-15", "iso_8859-15", "latin-9":
		return charmap.ISO8859_15
	case "csiso885916", "iso-8859-16", "iso-ir-226", "iso_8859-16", "iso_8859-16:2001", "l10", "latin10":
		return charmap.ISO8859_16
	case "csisolatin2", "iso-8859-2", "iso-ir-101", "iso_8859-2", "iso_8859-2:1987", "l2", "latin2":
		return charmap.ISO8859_2
	case "csisolatin3", "iso-8859-3", "iso-ir-109", "iso_8859-3", "iso_8859-3:1988", "l3", "latin3":
		return charmap.ISO8859_3
	case "csisolatin4", "iso-8859-4", "iso-ir-110", "iso_8859-4", "iso_8859-4:1988", "l4", "latin4":
		return charmap.ISO8859_4
	case "csisolatincyrillic", "cyrillic", "iso-8859-5", "iso-ir-144", "iso_8859-5", "iso_8859-5:1988":
		return charmap.ISO8859_5
	case "arabic", "asmo-708", "csisolatinarabic", "ecma-114", "iso-8859-6", "iso-ir-127", "iso_8859-6", "iso_8859-6:1987":
		return charmap.ISO8859_6
	case "csiso88596e", "iso-8859-6-e", "iso_8859-6-e":
		return charmap.ISO8859_6E
	case "csiso88596i", "iso-8859-6-i", "iso_8859-6-i":
		return charmap.ISO8859_6I
	case "csisolatingreek", "ecma-118", "elot_928", "greek", "greek8", "iso-8859-7", "iso-ir-126", "iso_8859-7", "iso_8859-7:1987":
		return charmap.ISO8859_7
	case "csisolatinhebrew", "hebrew", "iso-8859-8", "iso-ir-138", "iso_8859-8", "iso_8859-8:1988":
		return charmap.ISO8859_8
	case "csiso88598e", "iso-8859-8-e", "iso_8859-8-e":
		return charmap.ISO8859_8E
	case "csiso88598i", "iso-8859-8-i", "iso_8859-8-i":
		return charmap.ISO8859_8I
	case "csisolatin5", "iso-8859-9", "iso-ir-148", "iso_8859-9", "iso_8859-9:1989", "l5", "latin5":
		return charmap.ISO8859_9
	case "cskoi8r", "koi8-r":
		return charmap.KOI8R
	case "cskoi8u", "koi8-u":
		return charmap.KOI8U
	case "csmacintosh", "mac", "macintosh":
		return charmap.Macintosh
	case "cswindows1250", "windows-1250":
		return charmap.Windows1250
	case "cswindows1251", "windows-1251":
		return charmap.Windows1251
	case "cswindows1252", "windows-1252":
		return charmap.Windows1252
	case "cswindows1253", "windows-1253":
		return charmap.Windows1253
	case "cswindows1254", "windows-1254":
		return charmap.Windows1254
	case "cswindows1255", "windows-1255":
		return charmap.Windows1255
	case "cswindows1256", "windows-1256":
		return charmap.Windows1256
	case "cswindows1257", "windows-1257":
		return charmap.Windows1257
	case "cswindows1258", "windows-1258":
		return charmap.Windows1258
	case "cswindows874", "windows-874":
		return charmap.Windows874
	case "cseucpkdfmtjapanese", "euc-jp", "extended_unix_code_packed_format_for_japanese":
		return japanese.EUCJP
	case "csiso2022jp", "iso-2022-jp":
		return japanese.ISO2022JP
	case "csshiftjis", "ms_kanji", "shift_jis":
		return japanese.ShiftJIS
	case "cseuckr", "euc-kr":
		return korean.EUCKR
	case "csgb18030", "gb18030":
		return simplifiedchinese.GB18030
	case "cp936", "csgbk", "gbk", "ms936", "windows-936":
		return simplifiedchinese.GBK
	case "hz-gb-2312":
		return simplifiedchinese.HZGB2312
	case "big5", "csbig5":
		return traditionalchinese.Big5
	case "csutf8", "utf-8":
		return unicode.UTF8
	}
	return nil
}
